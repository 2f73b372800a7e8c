#ifndef SCANOUT_CEGL_SHIM_H
#define SCANOUT_CEGL_SHIM_H
#define EGL_EGLEXT_PROTOTYPES 0
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#include <GLES2/gl2ext.h>
// Cast macros that Swift cannot import.
static inline EGLDisplay scanout_egl_no_display(void) { return EGL_NO_DISPLAY; }
static inline EGLContext scanout_egl_no_context(void) { return EGL_NO_CONTEXT; }
static inline EGLSurface scanout_egl_no_surface(void) { return EGL_NO_SURFACE; }
static inline EGLConfig scanout_egl_no_config(void) { return (EGLConfig)0; }
static inline EGLImageKHR scanout_egl_no_image(void) { return EGL_NO_IMAGE_KHR; }
static inline EGLNativeDisplayType scanout_egl_default_display(void) { return EGL_DEFAULT_DISPLAY; }
#endif
