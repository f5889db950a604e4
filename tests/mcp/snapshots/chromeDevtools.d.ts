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
declare namespace MCP.chromeDevtools {
  function $api(toolName?: string, options?: { schema?: boolean }): Promise<McpApiHeader>;
}
