// What an admin route is: method, path (h3 syntax, under /admin/v1), scope, body validator, handler, OpenAPI text.
import type { ValidateFunction } from "ajv";
import type { Gateway } from "../gateway.ts";
import type { AdminKeyRuntime } from "../config/runtime.ts";
import type { AdminScope } from "./auth.ts";

export interface AdminRequest {
  gateway: Gateway;
  admin: AdminKeyRuntime;
  params: Record<string, string>;
  query: URLSearchParams;
  /** The validated body (routes with a validator), else undefined. */
  body: any;
  requestId: string;
}

export interface AdminAnswer {
  status?: number;
  body: unknown;
}

export interface AdminRoute {
  method: "GET" | "POST" | "PATCH";
  /** Under /admin/v1 (h3 syntax: `/keys/:project/:id`). */
  path: string;
  scope: AdminScope;
  /** Body validator; the body may be empty (no Content-Type, no bytes) when `bodyOptional`. */
  validate?: ValidateFunction;
  bodyOptional?: boolean;
  handle(r: AdminRequest): Promise<AdminAnswer>;
  openapi: {
    operationId: string;
    summary: string;
    requestSchema?: string;
    responseSchema?: string;
    query?: { name: string; description: string; schema?: Record<string, unknown> }[];
    /** 201 instead of 200 on success. */
    created?: boolean;
  };
}

export const ADMIN_PREFIX = "/admin/v1";

/** Is `path` the admin API's (routed or not): answered only after the admin key check. */
export const isAdminPath = (path: string): boolean => path === ADMIN_PREFIX || path.startsWith(`${ADMIN_PREFIX}/`);
