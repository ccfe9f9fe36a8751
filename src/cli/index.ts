export { runCli } from "./main.js";
