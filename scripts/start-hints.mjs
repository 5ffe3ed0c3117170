// What `npm start` says before wrangler's own lines (scripts/start.mjs): each part of the gateway
// that its local secrets leave off, and the line that turns it on. Pure: it is given the variables
// the Worker will see and where they come from.

/**
 * @param {Record<string, string | undefined>} vars the Worker's variables and secrets as `wrangler dev` will give them
 * @param {{ port: number, file: string }} where the port it serves on, and the file its secrets are read from (`.dev.vars`)
 * @returns {string[]} lines to print
 */
export function startHints(vars, { port, file }) {
  /** @type {string[]} */
  const lines = [];
  /** @param {string} name */
  const make = (name) => `printf '${name}=%s\\n' "$(openssl rand -hex 32)" >> ${file}`;
  const admin = vars.ADMIN_TOKEN ?? "";
  const vks = vars.VIRTUAL_KEY_SECRET ?? "";
  if (admin === "") {
    lines.push(
      `slotgate: the admin API and the dashboard are off: no ADMIN_TOKEN in ${file}, so every /admin route answers 404. To turn them on, run this and start again:`,
      `  ${make("ADMIN_TOKEN")}`,
    );
  } else {
    lines.push(`slotgate: the dashboard is on http://127.0.0.1:${port}/admin (its token: ADMIN_TOKEN in ${file})`);
  }
  if (vks === "") {
    lines.push(
      `slotgate: virtual keys are off: no VIRTUAL_KEY_SECRET in ${file}, so minting or using one answers 500 config_error. To turn them on, run this and start again:`,
      `  ${make("VIRTUAL_KEY_SECRET")}`,
    );
  } else if (vks === admin) {
    lines.push(
      `slotgate: virtual keys are off: VIRTUAL_KEY_SECRET is ADMIN_TOKEN's value (a key's holder could test guesses of it), so they answer 500 config_error. Give it its own value in ${file}, e.g. from:`,
      "  openssl rand -hex 32",
    );
  }
  return lines;
}
