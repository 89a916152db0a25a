/**
 * Identifiers written as JSON numbers past 2^53 (int64 ids: one schema types deviceId as an
 * integer). JSON.parse rounds them, so the digits the service sent would be lost; refused instead
 * (schemas.ts idNumber), every call of a service writing its ids so was kept aside on every run:
 * partial each night for good, those calls' minutes in no billed total, though the digits were in
 * the text all along (probe70). Such a value is turned into JSON text before parsing, so it is read
 * as the string of its digits, as an id written as text is.
 */

/** Keys whose values are ids (calls, participants, recordings, transcriptions, members, parties). */
const ID_KEYS = ['uid', 'deviceId', 'deviceID', 'rid', 'tid', 'mid', 'receiver', 'initiator', 'guid', 'id', 'sessionId'];

/**
 * `"key": <integer of 16 or more digits>` for an id key. A key inside a JSON string has its quotes
 * escaped (`\"uid\"`), so it never matches; neither does a key that only ends in one of these.
 */
const LONG_ID = new RegExp(`"(${ID_KEYS.join('|')})"(\\s*):(\\s*)(-?\\d{16,})(?=\\s*[,}\\]])`, 'g');

/** `text` with every id written as an integer JSON.parse would round turned into the string of its digits. */
export function longIdsAsText(text: string): string {
  // Most bodies hold no 16-digit run at all: no replace, no copy.
  if (!/\d{16}/.test(text)) return text;
  return text.replace(LONG_ID, (whole: string, key: string, before: string, after: string, digits: string) =>
    Number.isSafeInteger(Number(digits)) ? whole : `"${key}"${before}:${after}"${digits}"`,
  );
}
