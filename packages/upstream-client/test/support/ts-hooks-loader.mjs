// The module hooks registered by ts-hooks.mjs: `.ts` files are transpiled (types erased) by
// TypeScript's `transpileModule`, everything else loads as usual.
import { readFile } from 'node:fs/promises'
import ts from 'typescript'

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context)
  const source = await readFile(new URL(url), 'utf8')
  const { outputText } = ts.transpileModule(source, {
    fileName: new URL(url).pathname,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
    },
  })
  return { format: 'module', source: outputText, shortCircuit: true }
}
