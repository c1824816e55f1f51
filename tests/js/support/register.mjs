// Registers the resolve hook that lets the served modules import their peers
// ("react", "react-dom") from this test package's node_modules, as a host
// application's bundler would. Loaded with `node --import`.
import { register } from "node:module";

register("./peer-resolve.mjs", import.meta.url);
