"""drtc's runtime worker, as a package: `protocol` (JSON lines on a private stdout),
`common` (device, error lines, GPU faults), `memory` (peak GPU memory, out-of-memory),
`guards` (tamper detection, poisoned allocations, side streams, strict mode),
`comparison` (the value rules of semantics.md), `pair` (loading a reference and a
candidate), `trials` (verification), `timing` (CUDA-event timing). `worker.py`, beside
this package, is the entry point.
"""
