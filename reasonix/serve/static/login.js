// The login form: shown when the page has no session cookie (or it expired).
import { $, state } from "./dom.js";
import { api } from "./transport.js";

export function showLogin(hint) {
  $("app").hidden = true;
  $("login").hidden = false;
  $("login-hint").textContent = hint;
  $("login-secret").placeholder = state.auth === "password" ? "password" : "token";
  $("login-secret").focus();
}

export async function login(secret) {
  const r = await api("POST", "/api/login", { secret });
  if (!r.ok) { $("login-error").textContent = r.data.error || "login failed"; return false; }
  $("login-error").textContent = "";
  return true;
}
