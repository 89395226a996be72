/* (being written) */
#ifndef DVI_TOOL_OUTPUT_H
#define DVI_TOOL_OUTPUT_H
#endif
