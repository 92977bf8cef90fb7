// Lets a plain `node` child process (Node 20 cannot strip types) import this package's
// TypeScript sources: `node --import ./ts-hooks.mjs driver.ts`. Test use only.
import { register } from 'node:module'

register('./ts-hooks-loader.mjs', import.meta.url)
