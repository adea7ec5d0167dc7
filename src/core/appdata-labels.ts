/**
 * The label names a file's appdata holds, as the search condition `appdata_labels` finds them
 * (docs/files.md "Search"): every string under a key `Name`, at any depth of any add-on's entry
 * (`aws_rekognition_detect_labels`' `Labels[].Name` and `Labels[].Parents[].Name`,
 * `aws_rekognition_detect_moderation_labels`' `ModerationLabels[].Name`, …). Before migration 0017
 * search matched `"Name":"<label>"` in the appdata JSON text; this reads the same names from the
 * parsed value, so the indexed table `file_labels` holds exactly what that text match found.
 * Pure: no I/O.
 */

/** What a label in a search may be (and so the only names worth indexing): no quote, backslash or control character. */
// eslint-disable-next-line no-control-regex
export const LABEL_SYNTAX = /^[^"\\\u0000-\u001f]{1,128}$/;

/** The form a label is stored and compared in: case-insensitive, the same fold in both databases (done here, not by SQL lower()). */
export function labelKey(name: string): string {
  return name.toLowerCase();
}

/**
 * The distinct label keys of an appdata value (parsed JSON). Walked with an explicit stack: an
 * imported file's appdata may nest deeper than the call stack allows.
 */
export function appdataLabelKeys(appdata: unknown): string[] {
  const keys = new Set<string>();
  const stack: unknown[] = [appdata];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        if (k === 'Name' && typeof item === 'string') {
          if (LABEL_SYNTAX.test(item)) keys.add(labelKey(item));
        } else stack.push(item);
      }
    }
  }
  return [...keys];
}
