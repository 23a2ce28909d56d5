# Sourced at the start of a device (GPU machine) call: unpacks the carried .deb
# dependencies (scripts/device_deps.sh) into /tmp/ftdeps and exports the paths a
# CMake configure and the built binaries need.
if [ -d .carry/debs ]; then
  mkdir -p /tmp/ftdeps
  for f in .carry/debs/*.deb; do dpkg -x "$f" /tmp/ftdeps; done
  export FLASHTICK_DEPS_PREFIX=/tmp/ftdeps/usr
  export CMAKE_PREFIX_PATH=/tmp/ftdeps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  export LD_LIBRARY_PATH=/tmp/ftdeps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
if [ -d .carry/lib ]; then
  export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# Puts the lib folder of the cuDNN wheel beside PyTorch (the one bench/scripts/gpu_cudnn.sh
# builds against) on LD_LIBRARY_PATH, for binaries built with the cuDNN backend; nothing
# when there is no such wheel.
use_cudnn_wheel_libs() {
  local site lib
  site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2> /dev/null) || return 0
  lib=$(find "$site/nvidia" -name libcudnn.so.9 2> /dev/null | head -1)
  [ -n "$lib" ] || return 0
  lib=$(dirname "$lib")
  export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}
