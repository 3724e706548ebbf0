// A record's value on an output topic: its JSON with the pipeline's state epoch (docs/design.md
// §9), so that a consumer can tell a replay's results from earlier ones. Appended to the JSON
// text rather than spread into the object: a spread followed by a new property is V8's slow
// path, and this runs for every result.

/** `,"epoch":"<epoch>"}`: what closes every value of a pipeline in that epoch. */
export function epochSuffix(epoch: string): string {
  return `,"epoch":${JSON.stringify(epoch)}}`;
}

/** `record` (an object with at least one field) as JSON, `suffix` closing it. */
export function resultValue(record: object, suffix: string): string {
  const json = JSON.stringify(record);
  return json.slice(0, -1) + suffix;
}
