// Reads an asciicast v2 recording (what Yett seals for hosts that record
// their sessions) into what the command printed and what it was given,
// as plain text for a <pre>: never HTML.

export interface CastText {
  command: string;
  title: string;
  output: string;
  input: string;
  /** Lines that were not valid asciicast events. */
  skipped: number;
}

export function castText(cast: string): CastText {
  const out: CastText = { command: '', title: '', output: '', input: '', skipped: 0 };
  const lines = cast.split('\n').filter((l) => l.trim() !== '');
  lines.forEach((line, i) => {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      out.skipped++;
      return;
    }
    if (i === 0 && typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const h = v as Record<string, unknown>;
      if (typeof h.command === 'string') out.command = h.command;
      if (typeof h.title === 'string') out.title = h.title;
      return;
    }
    if (!Array.isArray(v) || v.length !== 3 || typeof v[0] !== 'number' || typeof v[2] !== 'string') {
      out.skipped++;
      return;
    }
    if (v[1] === 'o') out.output += v[2];
    else if (v[1] === 'i') out.input += v[2];
    else out.skipped++;
  });
  return out;
}
