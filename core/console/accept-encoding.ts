// Whether a request's Accept-Encoding takes gzip, q-values read (RFC 9110 12.5.3): "gzip;q=0" refuses it, "*" stands
// for every coding not named, and a header that names none of them (or is absent) asks for the content as it is.

/** The q-value (0 to 1) of each coding named, lower-cased; a malformed q makes the entry count as absent. */
function weights(header: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of header.split(",")) {
    const [name = "", ...params] = part.split(";").map((s) => s.trim());
    if (!name) continue;
    let q = 1;
    for (const p of params) {
      const m = /^q\s*=\s*(.*)$/i.exec(p);
      if (m) q = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(m[1]!) ? Number(m[1]) : NaN;
    }
    if (!Number.isNaN(q)) out.set(name.toLowerCase(), q);
  }
  return out;
}

export function acceptsGzip(header: string | string[] | undefined): boolean {
  const w = weights(Array.isArray(header) ? header.join(",") : header ?? "");
  const q = w.get("gzip") ?? w.get("x-gzip") ?? w.get("*") ?? 0;
  return q > 0;
}
