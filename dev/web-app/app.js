// The partner gateway's reference web app (docs/security.md, "Web apps"). Copy this pattern:
// - never handle a token: the gateway holds them; the browser holds an HttpOnly cookie it cannot read;
// - send every API call with credentials and the header X-CSRF: 1 (the gateway refuses a call
//   with the cookie and without it, so no other site can make the browser call on the user's behalf);
// - log in and out by navigating, never by fetching: GET /api/v1/session/login, POST /api/v1/session/logout.
'use strict';

/** One API call: JSON in, the gateway's envelope out. */
async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: { 'X-CSRF': '1', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const envelope = await response.json().catch(() => null);
  return { status: response.status, envelope };
}

const $ = (id) => document.getElementById(id);

/** A message where the user acted: beside the button or form they used (`where`), else at the top. */
function say(text, isError = false, where = $('status')) {
  where.textContent = text;
  where.classList.toggle('error', isError);
}

/** An amount as the user reads money: the provider's decimal string, with its currency, in their locale. */
function money(amount, currency) {
  const value = Number(amount);
  if (!Number.isFinite(value)) return `${amount} ${currency}`;
  return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(value);
}

/** The numbers a bank account is paid into: the IBAN (EUR), or the sort code and account number (GBP). */
function accountNumbers(account) {
  const numbers = [];
  if (account.iban) numbers.push(`IBAN ${account.iban.replace(/(.{4})(?=.)/g, '$1 ')}`);
  if (account.sort_code) numbers.push(`sort code ${account.sort_code}`);
  if (account.account_number) numbers.push(`account number ${account.account_number}`);
  return numbers.join(', ');
}

function problem(envelope) {
  const error = envelope && envelope.error;
  return error ? `${error.message}${error.details ? ` (${error.details})` : ''} [error id ${error.id ?? 'n/a'}]` : 'The gateway did not answer';
}

async function showBalance(accountId, item) {
  const shown = item.querySelector('.balance');
  const { status, envelope } = await api('GET', `/api/v1/bank-accounts/${encodeURIComponent(accountId)}/balance`);
  if (status !== 200) return say(problem(envelope), true, shown);
  const { available, current, currency, as_of: asOf } = envelope.data;
  const when = asOf ? ` (as of ${new Date(asOf).toLocaleString()})` : '';
  say(`Balance: ${money(available, currency)} available, ${money(current, currency)} booked${when}`, false, shown);
}

/** Every page of a list: the gateway's lists hand out `next_cursor` until the last page. */
async function everything(path, key) {
  const items = [];
  let cursor = null;
  do {
    const { status, envelope } = await api('GET', `${path}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (status !== 200) throw new Error(problem(envelope));
    items.push(...envelope.data[key]);
    cursor = envelope.data.next_cursor;
  } while (cursor);
  return items;
}

/** How the user knows an account: its currency and the last four characters of its number, never an internal id. */
function accountLabel(account) {
  return `${account.currency} account •••• ${account.last4} (${account.status}), opened ${new Date(account.created_at).toLocaleDateString()}`;
}

/** How the user knows a customer: when it was made and what it holds. */
function customerLabel(customer) {
  const accounts = customer.bank_account_ids.length;
  return `Customer since ${new Date(customer.created_at).toLocaleDateString()}${customer.country ? ` (${customer.country})` : ''} · ${accounts} account${accounts === 1 ? '' : 's'}`;
}

async function renderAccounts() {
  let accounts;
  let customers;
  try {
    [accounts, customers] = await Promise.all([everything('/api/v1/bank-accounts', 'bank_accounts'), everything('/api/v1/customers', 'customers')]);
  } catch (error) {
    return say(error.message, true);
  }
  const list = $('accounts');
  list.replaceChildren();
  $('no-accounts').hidden = accounts.length > 0;
  for (const account of accounts) {
    const item = document.createElement('li');
    item.dataset.accountId = account.id;
    const label = document.createElement('span');
    label.className = 'account';
    label.textContent = accountLabel(account);
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = 'Show balance';
    button.className = 'show-balance';
    button.addEventListener('click', () => void showBalance(account.id, item));
    const balance = document.createElement('span');
    balance.className = 'balance';
    item.append(label, ' ', button, ' ', balance);
    list.append(item);
  }
  const select = $('account-customer');
  select.replaceChildren();
  $('no-customers').hidden = customers.length > 0;
  for (const customer of customers) select.append(new Option(customerLabel(customer), customer.customer_id));
}

async function render() {
  const { status, envelope } = await api('GET', '/api/v1/session');
  if (status === 401) {
    $('signed-in').hidden = true;
    $('signed-out').hidden = false;
    return;
  }
  if (status !== 200) return say(problem(envelope), true);
  const session = envelope.data;
  $('signed-out').hidden = true;
  $('signed-in').hidden = false;
  // The user's own display claims, as their provider gave them: shown to them, never stored by the gateway.
  const { name, preferred_username: username, email, sub } = session.user;
  $('user-name').textContent = [name, username ?? email].filter(Boolean).join(' · ') || sub;
  $('user-id').textContent = session.id;
  $('tenant').textContent = session.tenant;
  $('expires-at').textContent = new Date(session.expires_at).toLocaleString();
  await renderAccounts();
}

$('open-account').addEventListener('submit', async (event) => {
  event.preventDefault();
  const body = Object.fromEntries(new FormData(event.target));
  // The partner's own id for this request: sent again unchanged on a retry, it is never done twice.
  body.reference = crypto.randomUUID();
  const { status, envelope } = await api('POST', '/api/v1/bank-accounts', body);
  if (status !== 201) return say(problem(envelope), true, $('open-account-status'));
  const account = envelope.data;
  say(`Account opened (${account.currency}, ${account.status}): ${accountNumbers(account) || `id ${account.id}`}`, false, $('open-account-status'));
  await renderAccounts();
});

$('logout').addEventListener('click', async () => {
  const { status, envelope } = await api('POST', '/api/v1/session/logout', { return_to: '/app/' });
  if (status !== 200) return say(problem(envelope), true, $('logout-status'));
  // Logged out here; the provider's own session ends at its logout page, which comes back here.
  if (envelope.data.logout_url) window.location.assign(envelope.data.logout_url);
  else void render();
});

// Two years from today: well past the provider's rule that a document must not expire within a month.
const expiry = new Date();
expiry.setUTCFullYear(expiry.getUTCFullYear() + 2);
$('expiration-date').value = expiry.toISOString().slice(0, 10);

void render();
