// Reads whose answers may arrive out of order. The bridge to the Go side
// does not keep order (Wails' dev server answers from a goroutine per
// message), so two reloads started in order, by two change events, can be
// answered in the other: the older list would replace the newer one until
// the next change. A view reads through newestOnly, and only the answer to
// the newest read it started is applied.

/** Returns run(read, apply, fail): apply (or fail) happens only for the newest run started. */
export function newestOnly() {
  let started = 0;
  return async function run<T>(read: () => Promise<T>, apply: (v: T) => void, fail: (e: Error) => void = () => {}): Promise<void> {
    const me = ++started;
    try {
      const v = await read();
      if (me === started) apply(v);
    } catch (err) {
      if (me === started) fail(err as Error);
    }
  };
}
