/** The MCP types the core speaks in, from the official SDK. */
export type {
  AuthInfo,
  CallToolResult,
  ContentBlock,
  ServerContext,
  Tool,
  ToolAnnotations,
} from '@modelcontextprotocol/server';

/** A JSON object, as tool arguments and `_meta` are on the wire. */
export type JsonObject = Record<string, unknown>;
