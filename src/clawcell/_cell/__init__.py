"""One leg of one cell: drive the guest, dispatch over the bridge, settle."""
