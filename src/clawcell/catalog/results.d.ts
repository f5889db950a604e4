type CodeModeResultReference = {
  id: string;
  bytes: number;
  /** 1 for a scalar, the length of an array, the number of keys of an object. */
  count: number;
  /** Bounded description of the arrays and sample shapes found; not a schema. */
  shape: string;
  /** Verbatim JSON when the value is small, otherwise sampled paths, counts and items.
   * It can be cut short: load the full value instead of trusting a preview. */
  preview: string;
  previewTruncated: boolean;
};
/** Saved results belong to the agent run: they outlive cells and waits, and go when
 * the run ends. At most 64 of them share min(memoryLimitBytes,
 * maxSnapshotBytes) bytes of JSON; a full store rejects a save and never evicts.
 * Restart-safe cells cannot use results.
 * When a final object or array is too large for the output budget, an interactive cell
 * saves it for you and returns {truncated: true, reference, guidance}; when that is not
 * possible the value stays a truncation marker whose guidance says why.
 * Descriptors are at most 768 bytes of JSON: the 8 largest arrays found within 128
 * nodes, 5 levels and 16 keys per object, sampled at their first, middle and last item.
 */
declare const results: {
  /** Keep a JSON value for later cells; returns its descriptor, ready to show.
   * Example: return await results.save(await tool({}));
   */
  save(value: unknown): Promise<CodeModeResultReference>;
  /** A fresh copy of a saved value; check its preview before using unknown fields. */
  load(id: string): Promise<unknown>;
  /** Frees its space; any unknown or expired id rejects. */
  delete(id: string): Promise<boolean>;
};
/** The session store keeps small JSON values for later cells of this session. Keys count
 * 1 to 256 characters; a value is at most 256 KiB of JSON and a session 1 MiB. Writes
 * reach later cells only when this cell completes; inside the cell, load sees
 * them right away. Bad keys throw a TypeError, too large values a RangeError.
 */
declare function store(key: string, value: unknown): Promise<void>;
/** A stored value, or undefined for a key not set. store(key, undefined) deletes. */
declare function load(key: string): Promise<unknown>;
