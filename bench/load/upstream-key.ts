// The key the fake upstream requires, in a module of its own: the bare proxy's bundle takes it without taking the
// upstream's code (whose "am I the entry?" check would be true inside that bundle too).
export const UPSTREAM_KEY = "sk-fake-upstream";
