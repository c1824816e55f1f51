// Node module resolve hook: bare "react"/"react-dom" imports from files outside
// tests/js (the static modules served by Django) resolve against tests/js/node_modules.
const PEERS = /^(react|react-dom|jsdom)(\/|$)/;

export async function resolve(specifier, context, nextResolve) {
  if (PEERS.test(specifier)) {
    return nextResolve(specifier, { ...context, parentURL: import.meta.url });
  }
  return nextResolve(specifier, context);
}
