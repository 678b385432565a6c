// ajv ships CommonJS with `exports.default`; under NodeNext the default import is the module object.
// This file is the one place that unwraps it.
import ajvModule from "ajv";
import ajv2019Module from "ajv/dist/2019.js";
import ajv2020Module from "ajv/dist/2020.js";
import formatsModule from "ajv-formats";

export const Ajv = ajvModule.default;
export const Ajv2019 = ajv2019Module.default;
export const Ajv2020 = ajv2020Module.default;
export const addFormats = formatsModule.default;
export type { ValidateFunction, ErrorObject } from "ajv";
