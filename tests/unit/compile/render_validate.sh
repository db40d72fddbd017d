# render_validate.sh — sourced by the render tests (plan_render.sh,
# topk_render.sh, gemv_render.sh): validate_rendered TARGET DIR checks every
# kernel `poot compile --emit DIR` wrote for TARGET with the target's own tool —
# ptxas sm_80 (ptx) and sm_90 (ptx90), spirv-val (glsl), the wgpu wheel
# (tests/ref/wgsl_validate.py, wgsl), llc-19 + ld.lld-19 (amdgpu). It sets
# fail=1 on a failure and ran=1 when a tool ran; a missing tool prints SKIP.
# Needs $src (the source tree).
validate_rendered() {
  case $1 in
    ptx|ptx90)
      arch=sm_80; [ "$1" = ptx90 ] && arch=sm_90
      if command -v ptxas > /dev/null; then
        for f in "$2"/*.ptx; do ptxas -arch=$arch "$f" -o /dev/null || { echo "FAIL: ptxas $f"; fail=1; }; done
        ran=1
      else echo "SKIP: ptxas not found"; fi ;;
    glsl)
      if command -v spirv-val > /dev/null; then
        for f in "$2"/*.spv; do spirv-val --target-env vulkan1.2 "$f" || { echo "FAIL: spirv-val $f"; fail=1; }; done
        ran=1
      else echo "SKIP: spirv-val not found"; fi ;;
    wgsl)
      python3 "$src/tests/ref/wgsl_validate.py" "$2" > "$2.wgsl.log" 2>&1
      rc=$?
      if [ $rc -eq 77 ]; then echo "SKIP: wgpu: $(tail -1 "$2.wgsl.log")"
      elif [ $rc -ne 0 ]; then echo "FAIL: wgsl: $(grep FAIL "$2.wgsl.log" | head -3)"; fail=1
      else ran=1; fi ;;
    amdgpu)
      if command -v llc-19 > /dev/null && command -v ld.lld-19 > /dev/null; then
        for f in "$2"/*.ll; do
          llc-19 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -filetype=obj "$f" -o "$f.o" &&
            ld.lld-19 -shared "$f.o" -o "$f.co" || { echo "FAIL: llc/ld.lld $f"; fail=1; }
        done
        ran=1
      else echo "SKIP: llc-19/ld.lld-19 not found"; fi ;;
  esac
}
