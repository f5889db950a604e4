"""The QuickJS-NG reactor on wasmtime: the binary (located, verified, patched with
`clawcell_turn`), the process-wide engine and its epoch backstop, one instance and its fast
export calls, its linear memory and pristine image, and snapshots of that memory.

Internals of `clawcell.runtime`: `Guest` (`_guest.py`) builds on them; `compiled_reactor` is
exported there."""
