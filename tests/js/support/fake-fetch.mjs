// A scripted stand-in for fetch(): records every request and answers from a
// queue of {status, body} (or functions of the parsed request body).
export function fakeFetch(script = []) {
  const queue = [...script];
  const calls = [];
  async function fetch(url, init = {}) {
    const body = init.body ? JSON.parse(init.body) : undefined;
    calls.push({ url, method: init.method, headers: init.headers, credentials: init.credentials, body });
    let next = queue.shift();
    if (typeof next === "function") next = next({ url, body });
    if (!next) throw new Error(`unexpected request to ${url}`);
    const status = next.status ?? 200;
    const text = next.body === undefined ? "" : JSON.stringify(next.body);
    const headers = new Map(Object.entries(next.headers || {}).map(([k, v]) => [k.toLowerCase(), v]));
    return {
      ok: status >= 200 && status < 300,
      status,
      headers: { get: (name) => headers.get(name.toLowerCase()) ?? null },
      async text() {
        return text;
      },
    };
  }
  fetch.calls = calls;
  fetch.queue = queue;
  return fetch;
}

export const SESSION = { status: 201, body: { id: "s-1" } };

export function answer(snapshotId, extra = {}) {
  return { status: 201, body: { status: "answer", message: "ok", contextSnapshotId: snapshotId, ...extra } };
}

export function apiError(status, code, message = code, details = {}) {
  return { status, body: { error: { code, message, details } } };
}
