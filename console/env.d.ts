// Stylesheets imported for esbuild to bundle beside the script (bin/build.mjs).
declare module "*.css";
