import type { ErrorStep, ScriptToolCall, TextStep, ToolCallStep } from './script-steps.ts'

/** A todo item as the runtime's `todowrite` tool takes it. */
export interface TodoInput {
  content: string
  status: 'pending' | 'in_progress' | 'completed' | 'cancelled'
  priority: 'high' | 'medium' | 'low'
}

/** One question of the `question` tool; string options get an empty description. */
export interface QuestionInput {
  question: string
  header?: string
  options: ReadonlyArray<string | { label: string; description: string }>
  multiple?: boolean
}

const call = (name: string, input: unknown): ToolCallStep => ({ toolCall: { name, input } })

/**
 * Builders for common script steps, with the tool inputs of opencode 1.18.33 (read from the tool
 * schemas the runtime sends). Paths for read/write/edit should be absolute (`runtime.directory`).
 *
 * @example
 * model.script([step.bash('echo hi'), step.text('done')])
 */
export const step = {
  /** A text answer that ends the turn. */
  text: (text: string | readonly string[], timing: Omit<TextStep, 'text'> = {}): TextStep => ({
    text,
    ...timing,
  }),
  /** A slow answer: `chunks` streamed `intervalMs` apart (for waitMs/cancel tests). */
  slow: (chunks: readonly string[], intervalMs: number): TextStep => ({ text: chunks, intervalMs }),
  /** An HTTP error; by default 400 `invalid_request_error`, which fails the turn at once. */
  error: (error: ErrorStep['error'] = {}): ErrorStep => ({ error }),
  /** Several tool calls in one step. */
  calls: (...calls: ScriptToolCall[]): ToolCallStep => ({ toolCalls: calls }),
  bash: (
    command: string,
    extra: { description?: string; timeout?: number; workdir?: string } = {},
  ): ToolCallStep => call('bash', { command, description: 'Run a command', ...extra }),
  read: (filePath: string, extra: { offset?: number; limit?: number } = {}): ToolCallStep =>
    call('read', { filePath, ...extra }),
  write: (filePath: string, content: string): ToolCallStep => call('write', { filePath, content }),
  edit: (filePath: string, oldString: string, newString: string, replaceAll?: boolean): ToolCallStep =>
    call('edit', { filePath, oldString, newString, ...(replaceAll === undefined ? {} : { replaceAll }) }),
  todowrite: (todos: readonly TodoInput[]): ToolCallStep => call('todowrite', { todos }),
  /** `glob {pattern, path?}`: file names matching `pattern` below `path` (default the workspace). */
  glob: (pattern: string, path?: string): ToolCallStep =>
    call('glob', { pattern, ...(path === undefined ? {} : { path }) }),
  /** `grep {pattern, path?, include?}`: lines matching a regular expression. */
  grep: (pattern: string, extra: { path?: string; include?: string } = {}): ToolCallStep =>
    call('grep', { pattern, ...extra }),
  /** `list {path?}`: not a tool of 1.18.33 (a call of it is an unavailable tool); for later releases. */
  list: (path?: string): ToolCallStep => call('list', path === undefined ? {} : { path }),
  /** `webfetch {url, format, timeout}`; the timeout is set because 1.18.33's `GET /permission`
   * fails (400) while a webfetch ask without one is pending. */
  webfetch: (
    url: string,
    extra: { format?: 'text' | 'markdown' | 'html'; timeout?: number } = {},
  ): ToolCallStep => call('webfetch', { url, format: extra.format ?? 'text', timeout: extra.timeout ?? 10 }),
  /** `task {description, prompt, subagent_type}`: starts a subagent session. */
  task: (prompt: string, subagentType = 'general', description = 'subtask'): ToolCallStep =>
    call('task', { description, prompt, subagent_type: subagentType }),
  question: (...questions: QuestionInput[]): ToolCallStep =>
    call('question', {
      questions: questions.map(({ question, header, options, multiple }) => ({
        question,
        header: header ?? question.slice(0, 30),
        options: options.map((option) =>
          typeof option === 'string' ? { label: option, description: '' } : option,
        ),
        ...(multiple === undefined ? {} : { multiple }),
      })),
    }),
} as const
