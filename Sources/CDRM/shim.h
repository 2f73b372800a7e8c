#ifndef SCANOUT_CDRM_SHIM_H
#define SCANOUT_CDRM_SHIM_H
#include <stdint.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <drm_fourcc.h>
#include <gbm.h>
#include <sys/socket.h>
#include <linux/netlink.h>   // sockaddr_nl, for the uevent (hotplug) socket
static const uint32_t SCANOUT_DRM_FORMAT_XRGB8888 = DRM_FORMAT_XRGB8888;
static const uint32_t SCANOUT_DRM_FORMAT_NV12 = DRM_FORMAT_NV12;
static const uint32_t SCANOUT_DRM_FORMAT_P010 = DRM_FORMAT_P010;
static const uint64_t SCANOUT_DRM_FORMAT_MOD_LINEAR = DRM_FORMAT_MOD_LINEAR;
static const uint64_t SCANOUT_DRM_FORMAT_MOD_INVALID = DRM_FORMAT_MOD_INVALID;
// GBM fourccs are function-like macros, which Swift cannot import.
static const uint32_t SCANOUT_GBM_FORMAT_R8 = GBM_FORMAT_R8;
static const uint32_t SCANOUT_GBM_FORMAT_GR88 = GBM_FORMAT_GR88;
static const uint32_t SCANOUT_GBM_FORMAT_R16 = GBM_FORMAT_R16;
static const uint32_t SCANOUT_GBM_FORMAT_GR1616 = GBM_FORMAT_GR1616;
// HDMI-CEC through the kernel's CEC API (/dev/cecN): its ioctl numbers are function-like macros.
#include <linux/cec.h>
#include <sys/ioctl.h>
static const unsigned long SCANOUT_CEC_ADAP_G_CAPS = CEC_ADAP_G_CAPS;
static const unsigned long SCANOUT_CEC_ADAP_G_PHYS_ADDR = CEC_ADAP_G_PHYS_ADDR;
static const unsigned long SCANOUT_CEC_ADAP_G_LOG_ADDRS = CEC_ADAP_G_LOG_ADDRS;
static const unsigned long SCANOUT_CEC_ADAP_S_LOG_ADDRS = CEC_ADAP_S_LOG_ADDRS;
static const unsigned long SCANOUT_CEC_TRANSMIT = CEC_TRANSMIT;
#endif
