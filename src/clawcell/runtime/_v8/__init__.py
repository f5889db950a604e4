"""The V8 executor's family: the executor, its guests (one Deno worker process each), the
worker process and its sandbox, and the host's memory watch of it (`v8_worker.js` is the
worker's script).

Internals of `clawcell.runtime`; `V8Executor` is exported there."""
