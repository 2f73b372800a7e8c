#ifndef SCANOUT_CVAAPI_SHIM_H
#define SCANOUT_CVAAPI_SHIM_H
#include <va/va.h>
#include <va/va_drm.h>
#include <va/va_drmcommon.h>
static const int SCANOUT_VA_STATUS_SUCCESS = VA_STATUS_SUCCESS;
#endif
