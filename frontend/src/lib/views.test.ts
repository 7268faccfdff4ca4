import { describe, expect, it } from 'vitest';
import { ProtocolError, VIEWS, parseView, parseViews } from './backend';

type Spec = string | readonly string[];
type Name = keyof typeof VIEWS;

// A well-formed value of a field, from its generated description.
function sample(spec: Spec): unknown {
  if (typeof spec !== 'string') return spec[0];
  const s = spec.replace(/\?$/, '');
  if (s.endsWith('[]')) return [sample(s.slice(0, -2))];
  if (s === 's') return 'x';
  if (s === 'n') return 1;
  if (s === 'b') return true;
  return sampleView(s as Name);
}

function sampleView(name: Name): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [f, spec] of Object.entries(VIEWS[name].fields as Record<string, Spec>)) out[f] = sample(spec);
  return out;
}

// A value of the wrong kind for a field.
function wrong(spec: Spec): unknown {
  if (typeof spec !== 'string') return 'a value Go never sends';
  const s = spec.replace(/\?$/, '');
  if (s.endsWith('[]')) return {};
  return s === 's' ? 7 : s === 'n' || s === 'b' ? 'x' : 'not an object';
}

// Every generated view, field by field: a well-formed answer reads back as
// it was sent; a field of the wrong kind, or missing when Go always sends
// it, is refused; a field the view does not have is never copied; a list
// Go sent as null reads as empty, and a field Go may leave out reads as
// empty.
describe('the generated views', () => {
  for (const name of Object.keys(VIEWS) as Name[]) {
    it(`${name} reads what Go sends and refuses what it does not`, () => {
      const good = sampleView(name);
      expect(parseView(name, good)).toEqual(good);
      expect(parseView(name, { ...good, canary: 'CANARY-not-a-field' })).toEqual(good);
      expect(parseViews(name, null)).toEqual([]);
      expect(parseViews(name, [good])).toEqual([good]);
      expect(() => parseView(name, null)).toThrow(ProtocolError);
      for (const [f, spec] of Object.entries(VIEWS[name].fields as Record<string, Spec>)) {
        expect(() => parseView(name, { ...good, [f]: wrong(spec) }), `${name}.${f} of the wrong kind`).toThrow(ProtocolError);
        const { [f]: _, ...without } = good;
        if (typeof spec === 'string' && spec.endsWith('?')) {
          expect(parseView(name, without)[f as never], `${name}.${f} left out`).toEqual(
            spec.endsWith('[]?') ? [] : { 's?': '', 'n?': 0, 'b?': false }[spec] ?? undefined,
          );
        } else {
          expect(() => parseView(name, without), `${name}.${f} missing`).toThrow(ProtocolError);
        }
        if (typeof spec === 'string' && spec.replace(/\?$/, '').endsWith('[]')) {
          expect((parseView(name, { ...good, [f]: null }) as unknown as Record<string, unknown>)[f]).toEqual([]);
        }
      }
    });
  }
});
