interface McpApiHeader { header: string; tools?: unknown[]; schemas?: Record<string, unknown> }
interface McpToolResult {
  content: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}
interface McpResourcesListResult { resources: unknown[]; nextCursor?: string }
interface McpResourcesReadResult { contents: unknown[] }
interface McpPromptsListResult { prompts: unknown[]; nextCursor?: string }
interface McpPromptsGetResult { messages: unknown[]; description?: string }
declare namespace MCP.kitchen {
  function $api(toolName?: string, options?: { schema?: boolean }): Promise<McpApiHeader>;
  /**
   * Exits the process mid-call.
   */
  function crash(
    input?: Record<string, unknown>
  ): Promise<McpToolResult>;
  /**
   * Echo.
   *
   * @param value? Anything.
   */
  function delete2(
    input?: { value?: string; [key: string]: unknown; }
  ): Promise<McpToolResult>;
  /**
   * Delete invoices.
   *
   * @param value? Anything.
   */
  function deleteInvoices(
    input?: { value?: string; [key: string]: unknown; }
  ): Promise<McpToolResult>;
  /**
   * Echo the input back.
   *
   * @param value? Anything.
   */
  function echo(
    input?: { value?: string; [key: string]: unknown; }
  ): Promise<McpToolResult>;
  /**
   * Echo.
   *
   * @param value? Anything.
   */
  function enum2(
    input?: { value?: string; [key: string]: unknown; }
  ): Promise<McpToolResult>;
  /**
   * Never answers.
   */
  function hang(
    input?: Record<string, unknown>
  ): Promise<McpToolResult>;
  /**
   * A large schema.
   *
   * @param mode
   * @param level?
   * @param nothing?
   * @param values?
   * @param flags?
   * @param names?
   * @param colors?
   * @param rows?
   * @param closed?
   * @param tags?
   * @param never?
   * @param patterned?
   * @param either?
   * @param odd-key? Needs * / quotes.
   * @param limit? Page size. Default: 10.
   * @param deep?
   */
  function largeSchema(
    input: { mode: "fast" | "slow"; level?: 1 | 2; nothing?: never; values?: Array<string | number>; flags?: Array<boolean | null>; names?: Array<string | null>; colors?: Array<Array<"red" | "blue">>; rows?: Array<{ id: string; [key: string]: unknown; }>; closed?: { x?: number; }; tags?: Record<string, string>; never?: Record<string, never>; patterned?: Record<string, unknown>; either?: string | number | null; "odd-key"?: string; limit?: number; deep?: { k: { k: { k: { k: { k: { k: { k: { k: unknown; [key: string]: unknown; }; [key: string]: unknown; }; [key: string]: unknown; }; [key: string]: unknown; }; [key: string]: unknown; }; [key: string]: unknown; }; [key: string]: unknown; }; [key: string]: unknown; }; [key: string]: unknown; }
  ): Promise<McpToolResult>;
  /**
   * List overdue invoices.
   *
   * @param currency? ISO code. Default: "EUR".
   */
  function listInvoices(
    input?: { currency?: string; [key: string]: unknown; }
  ): Promise<McpToolResult>;
  /**
   * List overdue invoices too.
   *
   * @param currency? ISO code. Default: "EUR".
   */
  function listInvoices2(
    input?: { currency?: string; [key: string]: unknown; }
  ): Promise<McpToolResult>;
  /**
   * Echo with required a, b.
   *
   * @param a
   * @param b
   * @param c?
   */
  function needsArgs(
    input: { a: string; b: number; c?: boolean; [key: string]: unknown; }
  ): Promise<McpToolResult>;
  /**
   * Echo.
   *
   * @param value? Anything.
   */
  function patch(
    input?: { value?: string; [key: string]: unknown; }
  ): Promise<McpToolResult>;
  /**
   * Echo.
   *
   * @param value? Anything.
   */
  function prototype2(
    input?: { value?: string; [key: string]: unknown; }
  ): Promise<McpToolResult>;
  /**
   * Echo.
   *
   * @param value? Anything.
   */
  function readFile(
    input?: { value?: string; [key: string]: unknown; }
  ): Promise<McpToolResult>;
  /**
   * Fails softly.
   */
  function resolvedFailure(
    input?: Record<string, unknown>
  ): Promise<McpToolResult>;
  /**
   * Returns blocks with annotations and _meta.
   * Second line.
   */
  function structuredResult(
    input?: Record<string, unknown>
  ): Promise<McpToolResult>;
  namespace prompts {
    /**
     * Get one prompt of this server, rendered with its arguments.
     *
     * @param name The prompt name.
     * @param arguments? The prompt arguments.
     */
    function get(
      input: { name: string; arguments?: Record<string, string>; [key: string]: unknown; }
    ): Promise<McpPromptsGetResult>;
    /**
     * List the prompts of this server.
     *
     * @param cursor? A `nextCursor` from an earlier page.
     */
    function list(
      input?: { cursor?: string; [key: string]: unknown; }
    ): Promise<McpPromptsListResult>;
  }
  namespace resources {
    /**
     * List the resources of this server.
     *
     * @param cursor? A `nextCursor` from an earlier page.
     */
    function list(
      input?: { cursor?: string; [key: string]: unknown; }
    ): Promise<McpResourcesListResult>;
    /**
     * Read one resource of this server by URI.
     *
     * @param uri The resource URI.
     */
    function read(
      input: { uri: string; [key: string]: unknown; }
    ): Promise<McpResourcesReadResult>;
  }
}
