#!/usr/bin/env python3
"""One line per `poot bench --json` result (and its profile, when present).

    gpu-summary.py FILE.json ...
"""
import json
import sys


def main(paths):
    for path in paths:
        name = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        try:
            j = json.loads(open(path).read().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            print(f"{name:16s} FAILED (no result)")
            continue
        if j.get("context"):
            name = f"{name} (ctx {j['context']})"
        print(f"{name:16s} decode {j['decode_tok_s']:8.1f} tok/s = "
              f"{100 * j['fraction_of_limit']:5.1f}% of {j['limit_tok_s']:.0f} | prefill "
              f"{j['prefill_tok_s']:8.1f} ({j['prefill_tokens']}) | host {j['host_us_per_step']:.0f} us "
              f"dev {j['device_us_per_step']:.0f} us | {j['dispatches_per_step']:.0f} disp | capture "
              f"{j['capture_s']:.2f}s | eager/replay {j['eager_over_replay']:.2f} ids "
              f"{'=' if j['eager_ids_equal'] else 'DIFFER'} | copy {j['copy_bandwidth_gb_s']:.0f} GB/s"
              f" stream {j.get('stream_bandwidth_gb_s', 0):.0f} GB/s ({j.get('probe_mib', '?')} MiB;"
              f" limit from the {j.get('limit_from', 'copy')})")
        if j.get("probe_fell_back"):
            print(f"  note: --copy-mib {j['probe_asked_mib']}: {j.get('probe_note', '')}; "
                  f"measured with {j['probe_mib']} MiB")
        if j.get("stream_note"):
            print(f"  note: no stream probe: {j['stream_note']}")
        prof = j.get("profile", {})
        for k, v in prof.items():
            if not isinstance(v, dict):
                continue  # limit_gb_s, limit_from
            t = v.get("total", {})
            print(f"  {k}: {v['device_us_per_step']:.0f} us/step eager, "
                  f"{t.get('bytes_per_step', 0) * 1e-6:.1f} MB/step, {t.get('gb_s', 0):.0f} GB/s = "
                  f"{100 * t.get('fraction_of_stream', 0):.1f}% of {prof.get('limit_gb_s', 0):.0f}")
            for r in v["kinds"][:8]:
                print(f"    {r['us_per_step']:9.1f} us  {r['per_step']:5.1f}x "
                      f"{r.get('bytes_per_step', 0) * 1e-6:8.2f} MB {r.get('gb_s', 0):7.0f} GB/s "
                      f"{100 * r.get('fraction_of_stream', 0):5.1f}%  {r['label'][:90]}")


if __name__ == "__main__":
    main(sys.argv[1:])
