// The admin API's answers as the console reads them: the types generated from the admin API's response schemas
// (schemas/responses/admin-*.schema.json, docs/admin-api.md), named as the views use them. Money is a decimal
// string, times ISO 8601.
import type { AdminUsage } from "../core/generated/types/admin-usage.ts";
import type { AdminBudgets, BudgetState } from "../core/generated/types/admin-budgets.ts";
import type { AdminRequest } from "../core/generated/types/admin-request.ts";
import type { AdminRequestPage } from "../core/generated/types/admin-request-page.ts";
import type { AdminKey } from "../core/generated/types/admin-key.ts";
import type { AdminModels } from "../core/generated/types/admin-models.ts";
import type { AdminProviders } from "../core/generated/types/admin-providers.ts";
import type { AdminConfig } from "../core/generated/types/admin-config.ts";
import type { AdminConfigLoaded } from "../core/generated/types/admin-config-loaded.ts";
import type { AdminTraffic } from "../core/generated/types/admin-traffic.ts";

export type Usage = AdminUsage;
export type UsageRow = AdminUsage["rows"][number];
export type Dimension = AdminUsage["group_by"][number];
export type { BudgetState };
export type Budgets = AdminBudgets;
export type RequestRecord = AdminRequest;
export type Attempt = NonNullable<AdminRequest["attempt_list"]>[number];
export type RequestPage = AdminRequestPage;
export type KeyView = AdminKey;
export type ModelsAnswer = AdminModels;
export type Percentiles = NonNullable<AdminModels["models"][number]["endpoints"][number]["latency_last_1h"]>;
export type ProvidersAnswer = AdminProviders;
export type ConfigState = AdminConfig;
export type ConfigLoaded = AdminConfigLoaded;
export type Traffic = AdminTraffic;
export type TrafficPoint = AdminTraffic["points"][number];
