#ifndef SCANOUT_CVAAPI_SHIM_H
#define SCANOUT_CVAAPI_SHIM_H
#include <va/va.h>
#include <va/va_drm.h>
#include <va/va_drmcommon.h>
static const int SCANOUT_VA_STATUS_SUCCESS = VA_STATUS_SUCCESS;

// VADRMPRIMESurfaceDescriptor's objects and layers are arrays of anonymous structs, which
// Swift does not import: these read them (indices are the caller's to keep in range).
static inline int scanout_va_prime_object_fd(const VADRMPRIMESurfaceDescriptor *d, uint32_t i) { return d->objects[i].fd; }
static inline uint64_t scanout_va_prime_object_modifier(const VADRMPRIMESurfaceDescriptor *d, uint32_t i) { return d->objects[i].drm_format_modifier; }
static inline uint32_t scanout_va_prime_layer_format(const VADRMPRIMESurfaceDescriptor *d, uint32_t l) { return d->layers[l].drm_format; }
static inline uint32_t scanout_va_prime_layer_planes(const VADRMPRIMESurfaceDescriptor *d, uint32_t l) { return d->layers[l].num_planes; }
static inline uint32_t scanout_va_prime_plane_object(const VADRMPRIMESurfaceDescriptor *d, uint32_t l, uint32_t p) { return d->layers[l].object_index[p]; }
static inline uint32_t scanout_va_prime_plane_offset(const VADRMPRIMESurfaceDescriptor *d, uint32_t l, uint32_t p) { return d->layers[l].offset[p]; }
static inline uint32_t scanout_va_prime_plane_pitch(const VADRMPRIMESurfaceDescriptor *d, uint32_t l, uint32_t p) { return d->layers[l].pitch[p]; }
#endif
