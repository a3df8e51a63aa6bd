#!/usr/bin/env bash
# ctest tessel_bundle: scripts/bundle makes a tarball whose tools run after unpacking into a temporary
# directory, with an empty environment (no LD_LIBRARY_PATH, no PATH) and the build tree out of reach
# (every library must come from the bundle or the system set).
set -euo pipefail
root="$1"
build="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$root/scripts/bundle" --build "$build" --fast -o "$tmp/t.tar.xz"
mkdir "$tmp/x"
tar -C "$tmp/x" -xJf "$tmp/t.tar.xz"
dir="$(echo "$tmp"/x/tessel-*)"
fail() { echo "FAIL: $*" >&2; exit 1; }
for t in tessel tessel-worker tessel-builder tessel-gpu-selftest; do
  [ -x "$dir/bin/$t" ] || fail "bin/$t is missing from the bundle"
done
# RUNPATH, not the build tree: no library may resolve to $build.
for f in "$dir"/bin/*; do
  if env -i ldd "$f" | grep -q "$build"; then fail "$f resolves a library from the build tree"; fi
  if env -i ldd "$f" | grep -q "not found"; then fail "$f has unresolved libraries"; fi
done
[ -z "$(ls "$dir/lib" | grep -E '^(libc|libm|libstdc\+\+|libgcc_s|libcuda)\.so')" ] || fail "system libraries were bundled"
v="$(env -i "$dir/bin/tessel" --version)"
echo "$v" | grep -q '^tessel ' || fail "tessel --version printed '$v'"
pong="$(echo '{"version":1,"id":7,"op":"ping"}' | env -i "$dir/bin/tessel-worker" --stdio)"
echo "$pong" | grep -q '"message":"pong"' || fail "tessel-worker ping answered '$pong'"
echo "$pong" | grep -q '"id":7' || fail "tessel-worker ping answered '$pong'"
env -i "$dir/bin/tessel" workloads >/dev/null 2>&1 || env -i "$dir/bin/tessel" --help >/dev/null || fail "tessel --help failed"
st="$(env -i "$dir/bin/tessel-gpu-selftest")" || fail "tessel-gpu-selftest failed: $st"
# tessel tune from the bundle: candidates are linked with lib/libtessel_runtime.a and the system's c++.
[ -f "$dir/lib/libtessel_runtime.a" ] || fail "lib/libtessel_runtime.a is missing from the bundle"
tune="$(cd "$tmp" && env -i HOME="$tmp" PATH=/usr/bin:/bin "$dir/bin/tessel" tune --workload matmul:M=64,N=64,K=64 \
        --trials 4 --db "$tmp/t.db" 2>&1)" || fail "tessel tune failed: $tune"
echo "$tune" | grep -q "estimated latency [0-9]" || fail "tessel tune from the bundle measured nothing: $tune"
echo "bundle ok: $v; $(du -h "$tmp/t.tar.xz" | cut -f1); selftest: $(echo "$st" | tail -n 1)"
