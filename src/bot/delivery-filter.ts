/**
 * Platforms deliver an event again: Slack when it thinks the ack was late, Discord's gateway after a resume. A second
 * copy of a mention would start a second run; this filter drops repeats seen by this process at once, and the
 * database's claim (`claimInbound`) drops the rest, across restarts and processes.
 */

/** A filter that is true the first time it sees an id; remembers the last `size` ids. No id: always true. */
export function deliveryFilter(size: number): (id: string | undefined) => boolean {
  const seen = new Set<string>();
  return (id) => {
    if (!id) return true;
    if (seen.has(id)) return false;
    seen.add(id);
    if (seen.size > size) seen.delete(seen.values().next().value as string);
    return true;
  };
}
