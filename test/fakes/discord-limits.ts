/**
 * Discord's documented limits for a message, its embeds and components, and a modal, as one checker: the fake
 * Discord refuses a body that breaks one (400, code 50035, as the real API does), and the renderer's unit tests
 * assert no problems. Each problem names its place ("embeds[0].description: 4,100 > 4,096").
 */

/** Limits from Discord's API reference (messages, embeds, components, interactions). */
export const DISCORD_LIMITS = {
  content: 2_000,
  embeds: 10,
  embedTotal: 6_000,
  embedTitle: 256,
  embedDescription: 4_096,
  embedFields: 25,
  fieldName: 256,
  fieldValue: 1_024,
  footerText: 2_048,
  authorName: 256,
  actionRows: 5,
  rowButtons: 5,
  customId: 100,
  buttonLabel: 80,
  selectOptions: 25,
  optionLabel: 100,
  optionValue: 100,
  optionDescription: 100,
  placeholder: 150,
  modalTitle: 45,
  modalInputs: 5,
  inputLabel: 45,
  inputValue: 4_000,
  inputPlaceholder: 100,
} as const;

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function over(problems: string[], where: string, value: unknown, max: number): void {
  const n = str(value).length;
  if (n > max) problems.push(`${where}: ${n.toLocaleString('en-US')} > ${max.toLocaleString('en-US')}`);
}

/** Problems with a message body (create, edit, interaction response data, webhook follow-up); [] when valid. */
export function messageProblems(body: unknown): string[] {
  const problems: string[] = [];
  if (!isObj(body)) return ['body: not an object'];
  over(problems, 'content', body.content, DISCORD_LIMITS.content);
  const embeds = list(body.embeds);
  if (embeds.length > DISCORD_LIMITS.embeds) problems.push(`embeds: ${embeds.length} > ${DISCORD_LIMITS.embeds}`);
  let total = 0;
  embeds.forEach((e, i) => {
    if (!isObj(e)) return void problems.push(`embeds[${i}]: not an object`);
    const at = `embeds[${i}]`;
    over(problems, `${at}.title`, e.title, DISCORD_LIMITS.embedTitle);
    over(problems, `${at}.description`, e.description, DISCORD_LIMITS.embedDescription);
    const footer = isObj(e.footer) ? str(e.footer.text) : '';
    const author = isObj(e.author) ? str(e.author.name) : '';
    over(problems, `${at}.footer.text`, footer, DISCORD_LIMITS.footerText);
    over(problems, `${at}.author.name`, author, DISCORD_LIMITS.authorName);
    total += str(e.title).length + str(e.description).length + footer.length + author.length;
    const fields = list(e.fields);
    if (fields.length > DISCORD_LIMITS.embedFields)
      problems.push(`${at}.fields: ${fields.length} > ${DISCORD_LIMITS.embedFields}`);
    fields.forEach((f, j) => {
      const field = isObj(f) ? f : {};
      over(problems, `${at}.fields[${j}].name`, field.name, DISCORD_LIMITS.fieldName);
      over(problems, `${at}.fields[${j}].value`, field.value, DISCORD_LIMITS.fieldValue);
      if (!str(field.name) || !str(field.value)) problems.push(`${at}.fields[${j}]: name and value are required`);
      total += str(field.name).length + str(field.value).length;
    });
  });
  if (total > DISCORD_LIMITS.embedTotal)
    problems.push(`embeds: ${total.toLocaleString('en-US')} characters in total > 6,000`);
  const rows = list(body.components);
  if (rows.length > DISCORD_LIMITS.actionRows) problems.push(`components: ${rows.length} rows > 5`);
  rows.forEach((row, i) => problems.push(...rowProblems(row, `components[${i}]`, 'message')));
  return problems;
}

/** Problems with a modal (an interaction response of type 9); [] when valid. */
export function modalProblems(data: unknown): string[] {
  const problems: string[] = [];
  if (!isObj(data)) return ['modal: not an object'];
  if (!str(data.title)) problems.push('title: required');
  over(problems, 'title', data.title, DISCORD_LIMITS.modalTitle);
  if (!str(data.custom_id)) problems.push('custom_id: required');
  over(problems, 'custom_id', data.custom_id, DISCORD_LIMITS.customId);
  const rows = list(data.components);
  if (rows.length === 0 || rows.length > DISCORD_LIMITS.modalInputs)
    problems.push(`components: ${rows.length} rows, must be 1 to 5`);
  rows.forEach((row, i) => problems.push(...rowProblems(row, `components[${i}]`, 'modal')));
  return problems;
}

function rowProblems(row: unknown, at: string, where: 'message' | 'modal'): string[] {
  const problems: string[] = [];
  if (!isObj(row) || row.type !== 1) return [`${at}: not an action row`];
  const items = list(row.components);
  if (items.length === 0) problems.push(`${at}: an empty row`);
  const kinds = items.map((c) => (isObj(c) ? c.type : undefined));
  if (where === 'modal') {
    if (items.length !== 1 || kinds[0] !== 4) problems.push(`${at}: a modal row holds one text input`);
  } else if (kinds.includes(4)) {
    problems.push(`${at}: a text input outside a modal`);
  } else if (kinds.some((k) => k !== 2)) {
    if (items.length !== 1) problems.push(`${at}: a select menu takes a row of its own`);
  } else if (items.length > DISCORD_LIMITS.rowButtons) {
    problems.push(`${at}: ${items.length} buttons > 5`);
  }
  items.forEach((c, j) => problems.push(...componentProblems(c, `${at}.components[${j}]`)));
  return problems;
}

function componentProblems(c: unknown, at: string): string[] {
  const problems: string[] = [];
  if (!isObj(c)) return [`${at}: not an object`];
  const link = c.type === 2 && c.style === 5;
  if (!link) {
    if (!str(c.custom_id)) problems.push(`${at}.custom_id: required`);
    over(problems, `${at}.custom_id`, c.custom_id, DISCORD_LIMITS.customId);
  }
  if (c.type === 2) {
    if (!str(c.label) && !c.emoji) problems.push(`${at}: a button needs a label or an emoji`);
    over(problems, `${at}.label`, c.label, DISCORD_LIMITS.buttonLabel);
  } else if (c.type === 3) {
    const options = list(c.options);
    if (options.length === 0 || options.length > DISCORD_LIMITS.selectOptions)
      problems.push(`${at}.options: ${options.length}, must be 1 to 25`);
    const min = typeof c.min_values === 'number' ? c.min_values : 1;
    const max = typeof c.max_values === 'number' ? c.max_values : 1;
    if (min < 0 || max < 1 || min > max || max > options.length)
      problems.push(`${at}: min_values ${min} and max_values ${max} do not fit ${options.length} options`);
    over(problems, `${at}.placeholder`, c.placeholder, DISCORD_LIMITS.placeholder);
    options.forEach((o, k) => {
      const opt = isObj(o) ? o : {};
      if (!str(opt.label) || !str(opt.value)) problems.push(`${at}.options[${k}]: label and value are required`);
      over(problems, `${at}.options[${k}].label`, opt.label, DISCORD_LIMITS.optionLabel);
      over(problems, `${at}.options[${k}].value`, opt.value, DISCORD_LIMITS.optionValue);
      over(problems, `${at}.options[${k}].description`, opt.description, DISCORD_LIMITS.optionDescription);
    });
  } else if (c.type === 4) {
    if (!str(c.label)) problems.push(`${at}.label: required`);
    over(problems, `${at}.label`, c.label, DISCORD_LIMITS.inputLabel);
    over(problems, `${at}.value`, c.value, DISCORD_LIMITS.inputValue);
    over(problems, `${at}.placeholder`, c.placeholder, DISCORD_LIMITS.inputPlaceholder);
    if (typeof c.max_length === 'number' && c.max_length > DISCORD_LIMITS.inputValue)
      problems.push(`${at}.max_length: ${c.max_length} > 4,000`);
  } else {
    problems.push(`${at}: unknown component type ${String(c.type)}`);
  }
  return problems;
}

/**
 * Problems with an autocomplete answer's `data` (callback type 8), per Discord's API reference, "Interaction Response
 * Object: Autocomplete": at most 25 choices, each a name of 1–100 characters and, for a string option, a value of at
 * most 100 characters.
 */
export function autocompleteProblems(data: unknown): string[] {
  if (!isObj(data) || !Array.isArray(data.choices)) return ['choices: missing'];
  const problems: string[] = [];
  if (data.choices.length > 25) problems.push(`choices: ${data.choices.length} > 25`);
  for (const [k, choice] of data.choices.entries()) {
    const c = isObj(choice) ? choice : {};
    if (str(c.name).length === 0) problems.push(`choices[${k}].name: empty`);
    over(problems, `choices[${k}].name`, c.name, 100);
    over(problems, `choices[${k}].value`, c.value, 100);
  }
  return problems;
}

/**
 * Problems with a command as registered: Discord refuses an option that is both `autocomplete` and has `choices`
 * (API reference, "Application Command Option Structure": autocomplete "may not be set to true if choices are
 * present"), at any depth.
 */
export function commandProblems(command: unknown, where = 'command'): string[] {
  if (!isObj(command)) return [];
  const problems: string[] = [];
  if (command.autocomplete === true && list(command.choices).length > 0)
    problems.push(`${where}.${str(command.name)}: autocomplete with choices`);
  for (const option of list(command.options))
    problems.push(...commandProblems(option, `${where}.${str(command.name)}`));
  return problems;
}
