"""A turn's events as page operations over Server-Sent Events: the stream, its coalesced text
deltas, the streamed draft (filtered, then drawn as Markdown block by block) and the ops.

Internals of `clawcell.ui`."""
