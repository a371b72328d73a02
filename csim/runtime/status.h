/*
 * status: what the runtime's calls return, so that a caller tells a request the hardware
 * cannot take from a run that went wrong without reading messages. RT_INVALID: the request
 * does not fit the chips or is malformed (the user's input: `tpusim` exits 2); RT_FAILED: it
 * ran and failed, or the host ran out of memory (a chip error, a timeout: exits 1). Either
 * comes with a message in the caller's buffer.
 */
#ifndef RUNTIME_STATUS_H
#define RUNTIME_STATUS_H

typedef enum { RT_OK = 0, RT_INVALID = -1, RT_FAILED = -2 } rt_status_t;

#endif
