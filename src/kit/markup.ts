/** `text` as XML and HTML take it in an element or a double-quoted attribute: `&`, `<`, `>` and `"` escaped. */
export function escapeMarkup(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");
}
