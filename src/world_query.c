/* (being written) */
#include "dvi/base.h"
