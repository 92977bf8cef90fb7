import { describe, expect, it } from 'vitest'
import { extractSymbols, languageOf } from './extract-symbols.ts'

function symbols(path: string, source: string): string[] {
  const language = languageOf(path)
  if (language === undefined) throw new Error(`no language for ${path}`)
  return extractSymbols(source, language).map((hit) => `${hit.line}:${hit.column} ${hit.kind} ${hit.name}`)
}

describe('extractSymbols: TypeScript / JavaScript', () => {
  const source = [
    "import { x } from './x.js'", // 1
    'export function parse(input: string): Ast {', // 2
    '  if (input) {', // 3
    '    return helper(input)', // 4
    '  }', // 5
    '}', // 6
    'export default async function* stream() {}', // 7
    'export class Parser<T> extends Base {', // 8
    '  private readonly cache = new Map()', // 9
    '  constructor(private options: Options) {', // 10
    '    super()', // 11
    '  }', // 12
    '  async parseAll(items: T[]): Promise<void> {', // 13
    '    for (const item of items) {', // 14
    '      this.parse(item)', // 15
    '    }', // 16
    '  }', // 17
    '  static create = (options: Options): Parser => new Parser(options)', // 18
    '  get size(): number {', // 19
    '    return 1', // 20
    '  }', // 21
    '}', // 22
    'export interface Options {', // 23
    '  strict: boolean', // 24
    '}', // 25
    'export type Ast = Node | Leaf', // 26
    'export const enum Mode { A, B }', // 27
    'export const DEFAULT_LIMIT = 20', // 28
    'const MAX_DEPTH = 8', // 29
    'export const handler = async (req: Request) => {', // 30
    "describe('x', () => {", // 31
    "  it('works', () => {})", // 32
    '})', // 33
    'abstract class Shape {}', // 34
  ].join('\n')

  it('finds functions, classes, methods, interfaces, types, enums and constants', () => {
    expect(symbols('src/parser.ts', source)).toEqual([
      '2:17 function parse',
      '7:32 function stream',
      '8:14 class Parser',
      '10:3 method constructor',
      '13:9 method parseAll',
      '18:10 method create',
      '19:7 method size',
      '23:18 interface Options',
      '26:13 type Ast',
      '27:19 enum Mode',
      '28:14 constant DEFAULT_LIMIT',
      '29:7 constant MAX_DEPTH',
      '30:14 function handler',
      '34:16 class Shape',
    ])
  })

  it('applies to .js, .mjs, .cjs, .jsx, .tsx and .mts files', () => {
    for (const path of ['a.js', 'a.mjs', 'a.cjs', 'a.jsx', 'a.tsx', 'a.mts'])
      expect(symbols(path, 'function go() {}')).toEqual(['1:10 function go'])
  })
})

describe('extractSymbols: Python', () => {
  it('finds classes, methods, functions and module constants', () => {
    const source = [
      'MAX_RETRIES = 3', // 1
      '', // 2
      'class Client(Base):', // 3
      '    """Docstring."""', // 4
      '    def __init__(self, url):', // 5
      '        def inner():', // 6
      '            pass', // 7
      '        self.url = url', // 8
      '', // 9
      '    async def fetch(self):', // 10
      '        return 1', // 11
      '', // 12
      'def main():', // 13
      '    pass', // 14
      'async def run(): pass', // 15
    ].join('\n')
    expect(symbols('client.py', source)).toEqual([
      '1:1 constant MAX_RETRIES',
      '3:7 class Client',
      '5:9 method __init__',
      '6:13 function inner',
      '10:15 method fetch',
      '13:5 function main',
      '15:11 function run',
    ])
  })
})

describe('extractSymbols: Go', () => {
  it('finds functions, methods with receivers, structs, interfaces, types and constants', () => {
    const source = [
      'package main', // 1
      'const Version = "1"', // 2
      'const (', // 3
      '\tModeA Mode = iota', // 4
      '\tModeB', // 5
      ')', // 6
      'type Server struct {', // 7
      '\taddr string', // 8
      '}', // 9
      'type Handler interface {', // 10
      '\tServe()', // 11
      '}', // 12
      'type Mode int', // 13
      'type (', // 14
      '\tID string', // 15
      '\tConfig struct{}', // 16
      ')', // 17
      'func New(addr string) *Server {', // 18
      '}', // 19
      'func (s *Server) Start() error {', // 20
      '}', // 21
      'func Map[T any](xs []T) {}', // 22
    ].join('\n')
    expect(symbols('main.go', source)).toEqual([
      '2:7 constant Version',
      '4:2 constant ModeA',
      '5:2 constant ModeB',
      '7:6 struct Server',
      '10:6 interface Handler',
      '13:6 type Mode',
      '15:2 type ID',
      '16:2 struct Config',
      '18:6 function New',
      '20:18 method Start',
      '22:6 function Map',
    ])
  })
})

describe('extractSymbols: Rust', () => {
  it('finds functions, methods in impl and trait blocks, structs, enums, traits, impls, types, constants', () => {
    const source = [
      'pub const MAX: usize = 10;', // 1
      'static mut COUNTER: u32 = 0;', // 2
      'pub struct Point { x: i32 }', // 3
      'pub(crate) enum Shape {', // 4
      '    Circle,', // 5
      '}', // 6
      'pub trait Draw {', // 7
      '    fn draw(&self);', // 8
      '}', // 9
      'impl<T: Into<String>> Draw for Wrapper<T> {', // 10
      '    fn draw(&self) {}', // 11
      '}', // 12
      'impl Point {', // 13
      '    pub async fn new() -> Self {', // 14
      '        Point { x: 0 }', // 15
      '    }', // 16
      '}', // 17
      'pub type Result<T> = std::result::Result<T, Error>;', // 18
      'pub unsafe extern "C" fn callback() {}', // 19
      'fn main() {', // 20
      '    fn nested() {}', // 21
      '}', // 22
    ].join('\n')
    expect(symbols('lib.rs', source)).toEqual([
      '1:11 constant MAX',
      '2:12 constant COUNTER',
      '3:12 struct Point',
      '4:17 enum Shape',
      '7:11 trait Draw',
      '8:8 method draw',
      '10:32 impl Wrapper',
      '11:8 method draw',
      '13:6 impl Point',
      '14:18 method new',
      '18:10 type Result',
      '19:26 function callback',
      '20:4 function main',
      '21:8 function nested',
    ])
  })
})

describe('extractSymbols: Java', () => {
  it('finds classes, interfaces, enums, records, methods, constructors and constants', () => {
    const source = [
      'package a;', // 1
      '@Service', // 2
      'public final class OrderService extends Base implements Api {', // 3
      '    private static final int MAX_ITEMS = 10;', // 4
      '    private final Repo repo = new Repo();', // 5
      '    public OrderService(Repo repo) {', // 6
      '        this.repo = repo;', // 7
      '        save(repo);', // 8
      '    }', // 9
      '    OrderService() {', // 10
      '    }', // 11
      '    @Override', // 12
      '    public <T> List<Map<String, T>> findAll(int limit) throws IOException {', // 13
      '        if (limit > 0) {', // 14
      '            return null;', // 15
      '        }', // 16
      '    }', // 17
      '    interface Listener {', // 18
      '        void onEvent(Event e);', // 19
      '    }', // 20
      '}', // 21
      'enum Color {', // 22
      '    RED("r"),', // 23
      '    GREEN("g");', // 24
      '    Color(String code) {}', // 25
      '}', // 26
      'public record Point(int x, int y) {}', // 27
      '@interface Marker {}', // 28
    ].join('\n')
    expect(symbols('OrderService.java', source)).toEqual([
      '3:20 class OrderService',
      '4:30 constant MAX_ITEMS',
      '6:12 method OrderService',
      '10:5 method OrderService',
      '13:37 method findAll',
      '18:15 interface Listener',
      '19:14 method onEvent',
      '22:6 enum Color',
      '25:5 method Color',
      '27:15 record Point',
      '28:12 interface Marker',
    ])
  })
})

describe('languageOf', () => {
  it('knows only the supported extensions', () => {
    expect(languageOf('a/b.ts')).toBeDefined()
    expect(languageOf('a/b.md')).toBeUndefined()
    expect(languageOf('Makefile')).toBeUndefined()
  })
})
