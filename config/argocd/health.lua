-- Argo CD health check for the capabilities.apimsync.io kinds (Backend, Product, ApplicationPlan).
-- Synced -> Healthy; InSync / Orphan -> Progressing; Invalid -> Degraded; being deleted -> Progressing with
-- the deletion message. A status not written yet for this generation is Progressing.
local hs = { status = "Progressing", message = "Waiting for apimsync to sync this object" }
local function condition(obj, type)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end
local function isTrue(obj, type)
  local c = condition(obj, type)
  return c ~= nil and c.status == "True"
end
local ready = condition(obj, "Ready")
local message = hs.message
if ready ~= nil and ready.message ~= nil and ready.message ~= "" then
  message = ready.message
end
if obj.metadata ~= nil and obj.metadata.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = "Deleting: " .. message
  return hs
end
hs.message = message
local generation = obj.metadata ~= nil and obj.metadata.generation or nil
local observed = obj.status ~= nil and obj.status.observedGeneration or nil
if isTrue(obj, "Invalid") then
  hs.status = "Degraded"
  hs.message = message
elseif isTrue(obj, "Synced") and (generation == nil or observed == generation) then
  hs.status = "Healthy"
  hs.message = message
elseif isTrue(obj, "Orphan") or isTrue(obj, "InSync") then
  hs.status = "Progressing"
  hs.message = message
end
return hs
