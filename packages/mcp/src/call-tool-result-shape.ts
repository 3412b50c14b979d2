// Whether a stored record is a successful `CallToolResult` a client accepts: what `withIdempotency`
// replays. The check follows the SDK's `CallToolResultSchema` (content blocks by their type and
// required fields, `structuredContent` an object, `_meta` an object) without importing the SDK at
// run time; a record that fails it (tampered, corrupted, or stored by something else under the key)
// is never replayed.

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const isString = (value: unknown): value is string => typeof value === "string";

const optionalRecord = (value: unknown): boolean => value === undefined || isRecord(value);

/** One content block of a tool result: text, image, audio, a resource link or an embedded resource. */
function isContentBlock(block: unknown): boolean {
  if (!isRecord(block) || !optionalRecord(block._meta) || !optionalRecord(block.annotations)) return false;
  switch (block.type) {
    case "text":
      return isString(block.text);
    case "image":
    case "audio":
      return isString(block.data) && isString(block.mimeType);
    case "resource_link":
      return isString(block.uri) && isString(block.name);
    case "resource": {
      const resource = block.resource;
      return isRecord(resource) && isString(resource.uri) && (isString(resource.text) || isString(resource.blob));
    }
    default:
      return false;
  }
}

/**
 * A successful tool result as the SDK's client parses it: `content` an array of content blocks
 * (absent counts as empty), `structuredContent` and `_meta` objects when present, and `isError`
 * absent or `false` (a failure is never stored, so a stored failure is not one of ours).
 */
export function isSuccessfulCallToolResult(value: unknown): boolean {
  if (!isRecord(value)) return false;
  const { content, structuredContent, isError, _meta } = value;
  if (content !== undefined && !(Array.isArray(content) && content.every(isContentBlock))) return false;
  return optionalRecord(structuredContent) && optionalRecord(_meta) && (isError === undefined || isError === false);
}
