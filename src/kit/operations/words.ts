/** Words of an identifier: `list_directory_with_sizes`, `readFile`, `read-file` → lowercase words. */
export function words(identifier: string): string[] {
  return identifier
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "");
}

/** An identifier as one lowercase word: `file_path`, `filePath` → `filepath`. */
export const flat = (identifier: string) => words(identifier).join("");
