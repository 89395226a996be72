/* (being written) */
#include <dvi/dvi.h>
int main(void) { return 0; }
