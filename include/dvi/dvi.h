/* dvicontact — umbrella header. */
#ifndef DVI_DVI_H
#define DVI_DVI_H
#include "base.h"
#include "ccp.h"
#include "world.h"
#include "terrain.h"
#include "io.h"
#include "scene.h"
#include "output.h"
#include "dist.h"
#endif
