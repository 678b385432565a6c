// The response headers Node's writeHead would refuse (core/http/safe-head.ts drops them): checked as each third-party
// plugin's step settles, so the one that set such a header can be named when it is dropped. Node's own rules
// (validateHeaderName / validateHeaderValue), as two regular expressions: no exception thrown per header.
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** The names of the headers in `headers` Node would refuse; undefined when there is none (the usual case). */
export function invalidHeaders(headers: Record<string, unknown> | undefined): string[] | undefined {
  let bad: string[] | undefined;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (!TOKEN.test(name) || (Array.isArray(value) ? value.some(badValue) : badValue(value))) (bad ??= []).push(name);
  }
  return bad;
}

const badValue = (v: unknown): boolean => BAD_VALUE.test(String(v));
