// Where the served modules live, relative to this test package.
export const CONTEXTO_JS = new URL("../../../conversations/static/contexto/contexto.js", import.meta.url).href;
export const CONTEXTO_REACT_JS = new URL("../../../conversations/static/contexto/contexto-react.js", import.meta.url).href;
