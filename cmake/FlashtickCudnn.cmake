# The cuDNN attention backend (kernels/cuda/attention/cudnn_sdpa.cc) needs, besides
# CUDA: the header-only C++ cudnn-frontend (MIT; the PyPI wheel nvidia-cudnn-frontend
# ships include/cudnn_frontend.h) and cuDNN 9 (cudnn.h and libcudnn). When any is
# missing the backend is left out, said here, and cudnn_sdpa.cc compiles to entry
# points that return Unimplemented, so attention runs our kernels (docs/kernels/cudnn.md).
#
# Cache variables (all optional):
#   FLASHTICK_WITH_CUDNN              OFF to leave the backend out even when found.
#   FLASHTICK_CUDNN_FRONTEND_INCLUDE  folder holding cudnn_frontend.h; autodetected from
#                                     the nvidia-cudnn-frontend wheel of the project's
#                                     .venv (scripts/setup.sh), else of python3.
#   FLASHTICK_CUDNN_INCLUDE           folder holding cudnn.h (default: the CUDA toolkit's,
#                                     or $CUDNN_ROOT/include).
#   FLASHTICK_CUDNN_LIBRARY           libcudnn.so(.9) (default: the toolkit's lib64, or
#                                     $CUDNN_ROOT/lib); a wheel's lib/libcudnn.so.9 works.
# Sets FLASHTICK_CUDNN_FOUND.
option(FLASHTICK_WITH_CUDNN "Build the cuDNN attention backend when cudnn-frontend and cuDNN are found" ON)
set(FLASHTICK_CUDNN_FOUND OFF)
if(NOT FLASHTICK_WITH_CUDA OR NOT FLASHTICK_WITH_CUDNN)
  message(STATUS "cuDNN attention backend: off (FLASHTICK_WITH_CUDA=${FLASHTICK_WITH_CUDA}, "
                 "FLASHTICK_WITH_CUDNN=${FLASHTICK_WITH_CUDNN})")
  return()
endif()

if(NOT FLASHTICK_CUDNN_FRONTEND_INCLUDE)
  # The project's .venv first (scripts/setup.sh installs the wheel there), then PATH.
  if(EXISTS "${FLASHTICK_ROOT}/.venv/bin/python")
    set(_ft_cudnn_python "${FLASHTICK_ROOT}/.venv/bin/python")
  else()
    find_program(_ft_cudnn_python NAMES python3 python)
  endif()
  if(_ft_cudnn_python)
    execute_process(
      COMMAND ${_ft_cudnn_python} -c
        "import importlib.metadata as m; d = m.distribution('nvidia-cudnn-frontend'); f = [p for p in (d.files or []) if str(p).endswith('include/cudnn_frontend.h')]; print(d.locate_file(f[0]).parent.resolve() if f else '')"
      OUTPUT_VARIABLE _ft_fe_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _ft_fe_rc)
    if(_ft_fe_rc EQUAL 0 AND _ft_fe_dir AND EXISTS "${_ft_fe_dir}/cudnn_frontend.h")
      set(_ft_fe_detected "${_ft_fe_dir}")
    endif()
  endif()
endif()
set(FLASHTICK_CUDNN_FRONTEND_INCLUDE "${_ft_fe_detected}" CACHE PATH
    "Folder holding cudnn_frontend.h (autodetected from the nvidia-cudnn-frontend wheel)")

find_path(FLASHTICK_CUDNN_INCLUDE cudnn.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV CUDNN_ROOT PATH_SUFFIXES include)
find_library(FLASHTICK_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9
  HINTS ${CUDAToolkit_LIBRARY_DIR} ENV CUDNN_ROOT PATH_SUFFIXES lib64 lib)

if(NOT FLASHTICK_CUDNN_FRONTEND_INCLUDE OR NOT EXISTS "${FLASHTICK_CUDNN_FRONTEND_INCLUDE}/cudnn_frontend.h")
  message(STATUS "cuDNN attention backend: off (no cudnn_frontend.h; pip install nvidia-cudnn-frontend "
                 "or set FLASHTICK_CUDNN_FRONTEND_INCLUDE)")
elseif(NOT TARGET CUDA::nvrtc)
  # The frontend's plan code references NVRTC (its run-time compiled engines).
  message(STATUS "cuDNN attention backend: off (the CUDA toolkit has no NVRTC, which cudnn-frontend links)")
elseif(NOT FLASHTICK_CUDNN_INCLUDE OR NOT FLASHTICK_CUDNN_LIBRARY)
  message(STATUS "cuDNN attention backend: off (cuDNN not found: cudnn.h='${FLASHTICK_CUDNN_INCLUDE}', "
                 "libcudnn='${FLASHTICK_CUDNN_LIBRARY}'; set FLASHTICK_CUDNN_INCLUDE/LIBRARY or CUDNN_ROOT)")
else()
  file(STRINGS "${FLASHTICK_CUDNN_INCLUDE}/cudnn_version.h" _ft_cudnn_major REGEX "#define CUDNN_MAJOR [0-9]+")
  string(REGEX REPLACE ".*CUDNN_MAJOR ([0-9]+).*" "\\1" _ft_cudnn_major "${_ft_cudnn_major}")
  if(NOT _ft_cudnn_major OR _ft_cudnn_major LESS 9)
    message(STATUS "cuDNN attention backend: off (cuDNN ${_ft_cudnn_major} at ${FLASHTICK_CUDNN_INCLUDE}; need 9)")
  else()
    set(FLASHTICK_CUDNN_FOUND ON)
    message(STATUS "cuDNN attention backend: on (frontend ${FLASHTICK_CUDNN_FRONTEND_INCLUDE}, "
                   "cuDNN ${FLASHTICK_CUDNN_INCLUDE}, ${FLASHTICK_CUDNN_LIBRARY})")
  endif()
endif()
