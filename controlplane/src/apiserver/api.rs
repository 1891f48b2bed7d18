//! The verbs on resources, independent of HTTP: get, list, create, update, patch, delete and
//! their subresource variants. Each write goes through the same pipeline as in kube-apiserver:
//! decode (prune or type-check), defaults, mutating admission, validation, validating
//! admission, conversion to the storage version, an optimistically concurrent store write.

use std::sync::Arc;

use kruise_machinery::field::{ErrorList, FieldError, FieldPath};
use serde_json::{Value, json};

use super::{
    admission::{Admission, AdmissionRequest, Operation},
    builtin, claim_admission,
    conversion::Converter,
    errors::ApiError,
    objects,
    options::{DeleteOptions, FieldValidation, ListOptions, WriteOptions},
    pod_admission,
};
use crate::{
    registry::{Registry, ResourceDef},
    semantics::{apply, merge_keys, patch, schema},
    storage::{CollectionKey, ObjectKey, Store, StoreError},
};

/// The result of a write.
#[derive(Debug)]
pub struct Written {
    /// The object as stored, at the requested version.
    pub object: Value,
    /// Warnings for the client (`Warning` headers).
    pub warnings: Vec<String>,
    /// Whether the object was created (201) rather than updated (200).
    pub created: bool,
}

/// The result of a delete.
#[derive(Debug)]
pub enum Deleted {
    /// Removed from storage; the last state.
    Gone(Value),
    /// Still there, marked for deletion (finalizers or graceful deletion pending).
    Pending(Value),
}

/// The patch media types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json`.
    Json,
    /// `application/merge-patch+json`.
    Merge,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply).
    Apply,
}

/// The API operations over a store and a registry.
#[derive(Clone)]
pub struct Api {
    /// Object storage.
    pub store: Store,
    /// Served resources.
    pub registry: Arc<Registry>,
    admission: Admission,
    converter: Converter,
}

/// Retries of an update or patch that lost a race with another writer before answering 409.
const CONFLICT_RETRIES: usize = 5;

impl Api {
    /// The operations of one server.
    pub fn new(store: Store, registry: Arc<Registry>, admission: Admission, converter: Converter) -> Self {
        Self { store, registry, admission, converter }
    }

    /// The storage key of an object (under the owner's group and resource for a resource that
    /// shares another's storage).
    pub fn key(def: &ResourceDef, namespace: Option<&str>, name: &str) -> ObjectKey {
        ObjectKey {
            group: def.storage_group().to_string(),
            resource: def.storage_resource().to_string(),
            namespace: if def.namespaced { namespace.map(str::to_string) } else { None },
            name: name.to_string(),
        }
    }

    /// The collection of a resource in a namespace (or all); shared by the resources that
    /// share one storage.
    pub fn collection(def: &ResourceDef, namespace: Option<&str>) -> CollectionKey {
        CollectionKey {
            group: def.storage_group().to_string(),
            resource: def.storage_resource().to_string(),
            namespace: if def.namespaced { namespace.map(str::to_string) } else { None },
        }
    }

    /// Converts a stored object to `version`.
    pub async fn to_version(
        &self,
        def: &ResourceDef,
        object: Value,
        version: &str,
    ) -> Result<Value, ApiError> {
        self.converter.convert(def, object, version).await
    }

    /// Converts stored objects to `version` in one batch.
    pub async fn all_to_version(
        &self,
        def: &ResourceDef,
        objects: Vec<Value>,
        version: &str,
    ) -> Result<Vec<Value>, ApiError> {
        self.converter.convert_all(def, objects, version).await
    }

    /// GET one object.
    pub async fn get(
        &self,
        def: &ResourceDef,
        version: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let stored = self
            .store
            .get(&Self::key(def, namespace, name))
            .ok_or_else(|| ApiError::not_found(&def.group, &def.resource, name))?;
        self.to_version(def, (*stored).clone(), version).await
    }

    /// The objects of a collection matching the list options, at `version`, with the list's
    /// resourceVersion and continue token.
    pub async fn list(
        &self,
        def: &ResourceDef,
        version: &str,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<(Vec<Value>, u64, Option<String>), ApiError> {
        let filter = super::filter::Filter::new(def, options)?;
        let (stored, rv) = self.store.list(&Self::collection(def, namespace));
        let start_after = super::filter::decode_continue(&options.continue_token)?;
        let mut selected = Vec::new();
        let mut next = None;
        for object in stored.iter() {
            let position = super::filter::position(object);
            if start_after.as_ref().is_some_and(|after| &position <= after) {
                continue;
            }
            if !filter.matches(object) {
                continue;
            }
            if options.limit > 0 && selected.len() == options.limit {
                next = selected
                    .last()
                    .map(|last: &Value| super::filter::encode_continue(rv, &super::filter::position(last)));
                break;
            }
            selected.push((**object).clone());
        }
        let objects = self.all_to_version(def, selected, version).await?;
        Ok((objects, rv, next))
    }

    /// POST: creates an object in the collection.
    pub async fn create(
        &self,
        def: &ResourceDef,
        version: &str,
        namespace: Option<&str>,
        body: Value,
        options: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let mut object = self.check_body_type(def, version, body)?;
        if def.namespaced {
            let namespace =
                namespace.ok_or_else(|| ApiError::bad_request("the namespace of the object must be set"))?;
            match objects::namespace(&object) {
                Some(given) if given != namespace => {
                    return Err(ApiError::bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request",
                    ));
                }
                _ => objects::set_meta(&mut object, "namespace", Some(json!(namespace))),
            }
        } else {
            objects::set_meta(&mut object, "namespace", None);
        }
        if objects::resource_version(&object).is_some() {
            let errors = vec![FieldError::invalid(
                &FieldPath::root("metadata").child("resourceVersion"),
                objects::meta_str(&object, "resourceVersion").unwrap_or_default(),
                "must be empty",
            )];
            return Err(ApiError::invalid(
                &def.group,
                &def.kind,
                objects::name(&object).unwrap_or_default(),
                &errors,
            ));
        }
        if objects::name(&object).is_none()
            && let Some(prefix) = objects::meta_str(&object, "generateName").filter(|p| !p.is_empty())
        {
            let generated = format!("{prefix}{}", objects::random_suffix());
            objects::set_meta(&mut object, "name", Some(json!(generated)));
        }
        let mut warnings = self.normalize(def, version, &mut object, options.field_validation)?;
        let now = objects::now_rfc3339();
        objects::set_meta(&mut object, "uid", Some(json!(objects::new_uid())));
        objects::set_meta(&mut object, "creationTimestamp", Some(json!(now)));
        objects::set_meta(&mut object, "generation", builtin::tracks_generation(def).then(|| json!(1)));
        for field in ["deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "selfLink"] {
            objects::set_meta(&mut object, field, None);
        }
        if def.is_custom() && def.has_status() {
            object.as_object_mut().map(|o| o.remove("status"));
        }
        if !def.is_custom() {
            builtin::prepare_create(def, &mut object);
        }
        // NamespaceLifecycle comes first among kube-apiserver's admission plugins.
        if def.namespaced {
            let name = objects::name(&object).unwrap_or_default().to_string();
            self.check_namespace_accepts(namespace.unwrap_or_default(), &def.resource, &name)?;
        }
        if is_pod(def) {
            let forbidden = |object: &Value, message: String| {
                ApiError::forbidden("", "pods", objects::name(object).unwrap_or_default(), message)
            };
            let namespace = namespace.unwrap_or_default();
            if let Err(error) =
                pod_admission::admit_service_account_from(&self.store, namespace, &mut object).await
            {
                return Err(forbidden(&object, error.to_string()));
            }
            if let Err(error) = pod_admission::admit_priority_from(&self.store, &mut object) {
                return Err(forbidden(&object, error.to_string()));
            }
        }
        if def.group.is_empty() && def.kind == "PersistentVolumeClaim" {
            let classes = CollectionKey {
                group: "storage.k8s.io".into(),
                resource: "storageclasses".into(),
                namespace: None,
            };
            claim_admission::set_default_class(&mut object, &self.store.list(&classes).0);
        }
        // A server-side apply create arrives with the applier's managed fields already recorded.
        if object.pointer("/metadata/managedFields").is_none() {
            object = apply::record_update(
                None,
                &object,
                &options.field_manager,
                &self.list_types(def, version),
                &now,
            );
        }

        let name = objects::name(&object).unwrap_or_default().to_string();
        let request =
            self.admission_request(def, version, namespace, &name, "", Operation::Create, options.dry_run);
        let before_webhooks = is_pod(def).then(|| object.clone());
        warnings.extend(self.admission.mutate(&request, &mut object, None).await?.warnings);
        // kube-apiserver re-invokes its own mutating plugins when a webhook changed the object:
        // a pod whose priorityClassName a webhook changed (dropping `priority`) gets the new
        // class's priority.
        if before_webhooks.is_some_and(|before| before != object)
            && let Err(error) = pod_admission::admit_priority_from(&self.store, &mut object)
        {
            return Err(ApiError::forbidden(
                "",
                "pods",
                objects::name(&object).unwrap_or_default(),
                error.to_string(),
            ));
        }
        self.validate(def, version, &object, None, None)?;
        warnings.extend(self.admission.validate(&request, Some(&object), None).await?.warnings);
        if name.is_empty() {
            let errors = vec![FieldError::required(
                &FieldPath::root("metadata").child("name"),
                "name or generateName is required",
            )];
            return Err(ApiError::invalid(&def.group, &def.kind, "", &errors));
        }
        if options.dry_run {
            return Ok(Written { object, warnings, created: true });
        }
        let stored_form = self.converter.to_storage(def, object).await?;
        let key = Self::key(def, namespace, &name);
        let stored = self.store.create(&key, stored_form).map_err(|error| match error {
            StoreError::AlreadyExists => ApiError::already_exists(&def.group, &def.resource, &name),
            other => store_error(def, &name, other),
        })?;
        self.after_write(def);
        let object = self.to_version(def, (*stored).clone(), version).await?;
        Ok(Written { object, warnings, created: true })
    }

    /// Keeps the registry in step with CRD writes, so that a custom resource is served as soon as
    /// its CRD is stored (the CRD controller then reports it Established).
    fn after_write(&self, def: &ResourceDef) {
        if def.group == "apiextensions.k8s.io" && def.kind == "CustomResourceDefinition" {
            self.refresh_custom_resources();
        }
    }

    /// Rebuilds the custom resources of the registry from the stored CRDs.
    pub fn refresh_custom_resources(&self) {
        let collection = CollectionKey {
            group: "apiextensions.k8s.io".into(),
            resource: "customresourcedefinitions".into(),
            namespace: None,
        };
        let (stored, _) = self.store.list(&collection);
        let crds: Vec<_> = stored
            .iter()
            .filter(|crd| !objects::is_deleting(crd))
            .filter_map(|crd| serde_json::from_value((**crd).clone()).ok())
            .collect();
        self.registry.set_custom_resources(&crds);
    }

    /// Moves objects that a data directory written before a resource began sharing another's
    /// storage holds under the resource's own key to the shared collection (converted to the
    /// stored shape); one already there with the same name wins.
    pub async fn migrate_shared_storage(&self) {
        for def in self.registry.all().iter().filter(|def| def.shares_storage()) {
            let own =
                CollectionKey { group: def.group.clone(), resource: def.resource.clone(), namespace: None };
            let (stray, _) = self.store.list(&own);
            for object in stray.iter() {
                let name = objects::name(object).unwrap_or_default().to_string();
                let namespace = objects::namespace(object).map(str::to_string);
                let old_key = ObjectKey {
                    group: own.group.clone(),
                    resource: own.resource.clone(),
                    namespace: namespace.clone(),
                    name: name.clone(),
                };
                let mut moved = (**object).clone();
                objects::set_meta(&mut moved, "resourceVersion", None);
                match self.converter.to_storage(def, moved).await {
                    Ok(moved) => {
                        let _ = self.store.create(&Self::key(def, namespace.as_deref(), &name), moved);
                    }
                    Err(error) => tracing::warn!(%error, object = %name, "could not move a stored object"),
                }
                let _ = self.store.delete(&old_key, None);
            }
        }
    }

    /// PUT: replaces an object (or its `status`) with `body`.
    #[allow(clippy::too_many_arguments)]
    pub async fn update(
        &self,
        def: &ResourceDef,
        version: &str,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        body: Value,
        options: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let body = self.check_body_type(def, version, body)?;
        if objects::name(&body).is_some_and(|n| n != name) {
            return Err(ApiError::bad_request("the name of the object does not match the name on the URL"));
        }
        let precondition = objects::resource_version(&body);
        self.write_existing(def, version, namespace, name, subresource, options, precondition, move |_| {
            Ok(body.clone())
        })
        .await
    }

    /// PATCH: applies `patch_body` of the given type to an object (or its `status`).
    #[allow(clippy::too_many_arguments)]
    pub async fn patch(
        &self,
        def: &ResourceDef,
        version: &str,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        patch_type: PatchType,
        patch_body: Value,
        options: &WriteOptions,
    ) -> Result<Written, ApiError> {
        if patch_type == PatchType::Strategic && merge_keys::kind_patch_meta(&def.group, &def.kind).is_none()
        {
            return Err(ApiError::unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: \
                 application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
                    .to_string(),
            ));
        }
        if patch_type == PatchType::Apply {
            let exists = self.store.get(&Self::key(def, namespace, name)).is_some();
            if !exists && subresource.is_none() {
                return self.apply_create(def, version, namespace, name, patch_body, options).await;
            }
        }
        let precondition = match patch_type {
            PatchType::Merge | PatchType::Strategic => patch_body
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .and_then(|rv| rv.parse().ok()),
            _ => None,
        };
        let lists = self.list_types(def, version);
        let manager = options.field_manager.clone();
        let force = options.force;
        let now = objects::now_rfc3339();
        let group = def.group.clone();
        let kind = def.kind.clone();
        let resource = def.resource.clone();
        let has_status = def.has_status();
        let subresource_is_main = subresource.is_none();
        self.write_existing(
            def,
            version,
            namespace,
            name,
            subresource,
            options,
            precondition,
            move |current| {
                let patched = match patch_type {
                    PatchType::Json => patch::json_patch(current, &patch_body),
                    PatchType::Merge => patch::merge_patch(current, &patch_body),
                    PatchType::Strategic => match merge_keys::kind_patch_meta(&group, &kind) {
                        Some(meta) => patch::strategic_merge_patch(current, &patch_body, meta),
                        None => {
                            return Err(ApiError::unsupported_media_type(
                                "strategic merge patch is not supported",
                            ));
                        }
                    },
                    PatchType::Apply => {
                        // With a status subresource, the main resource's apply cannot set status.
                        let mut config = patch_body.clone();
                        if has_status && subresource_is_main {
                            config.as_object_mut().map(|c| c.remove("status"));
                        }
                        return apply::apply(Some(current), &config, &manager, force, &*lists, &now).map_err(
                            |error| match error {
                                apply::ApplyError::Conflicts(conflicts) => {
                                    let message = apply::conflict_message(Some(current), &conflicts);
                                    let pairs: Vec<(String, String)> =
                                        conflicts.into_iter().map(|c| (c.manager, c.field)).collect();
                                    let mut error = ApiError::apply_conflict(
                                        &group,
                                        &resource,
                                        objects::name(current).unwrap_or_default(),
                                        &pairs,
                                    );
                                    error.message = message;
                                    error
                                }
                                apply::ApplyError::Invalid(message) => ApiError::bad_request(message),
                            },
                        );
                    }
                };
                patched.map_err(|error| patch_error(&error))
            },
        )
        .await
    }

    /// Server-side apply of an object that does not exist yet: a create whose managed fields
    /// record the applier's ownership.
    async fn apply_create(
        &self,
        def: &ResourceDef,
        version: &str,
        namespace: Option<&str>,
        name: &str,
        config: Value,
        options: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let now = objects::now_rfc3339();
        let mut config = config;
        if def.has_status() {
            config.as_object_mut().map(|c| c.remove("status"));
        }
        let mut object = apply::apply(
            None,
            &config,
            &options.field_manager,
            options.force,
            &*self.list_types(def, version),
            &now,
        )
        .map_err(|error| ApiError::bad_request(error.to_string()))?;
        objects::set_meta(&mut object, "name", Some(json!(name)));
        self.create(def, version, namespace, object, options).await
    }

    /// The shared update path: reads the current object (at `version`), computes the new one
    /// with `change`, runs it through defaulting, admission and validation, and writes it if the
    /// object did not move meanwhile (retrying a few times when it did and no precondition was
    /// given, like kube-apiserver's GuaranteedUpdate).
    #[allow(clippy::too_many_arguments)]
    async fn write_existing(
        &self,
        def: &ResourceDef,
        version: &str,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        options: &WriteOptions,
        precondition: Option<u64>,
        change: impl Fn(&Value) -> Result<Value, ApiError>,
    ) -> Result<Written, ApiError> {
        let key = Self::key(def, namespace, name);
        let subresource = subresource.filter(|s| !s.is_empty());
        for _ in 0..CONFLICT_RETRIES {
            let stored =
                self.store.get(&key).ok_or_else(|| ApiError::not_found(&def.group, &def.resource, name))?;
            let stored_rv = objects::resource_version(&stored).unwrap_or(0);
            if let Some(expected) = precondition
                && expected != stored_rv
            {
                return Err(ApiError::conflict(&def.group, &def.resource, name));
            }
            let mut current = self.to_version(def, (*stored).clone(), version).await?;
            if !def.is_custom() {
                // As kube-apiserver decodes stored objects: with today's defaults (an object
                // stored before a default existed then compares equal to its defaulted update).
                builtin::prepare_write(def, &mut current);
            }
            let proposed = change(&current)?;
            let mut object = merge_for_update(def, subresource, &current, proposed);
            let mut warnings = self.normalize(def, version, &mut object, options.field_validation)?;
            if !def.is_custom() {
                builtin::prepare_write(def, &mut object);
            }
            if is_pod(def) {
                pod_admission::keep_priority(&current, &mut object);
            }
            let now = objects::now_rfc3339();
            // As kube-apiserver: an update that carries no managed fields (absent or empty) keeps
            // the stored ones, and the write is recorded on top of them.
            let carries_none = object
                .pointer("/metadata/managedFields")
                .is_none_or(|fields| fields.is_null() || fields.as_array().is_some_and(Vec::is_empty));
            if carries_none {
                objects::set_meta(
                    &mut object,
                    "managedFields",
                    current.pointer("/metadata/managedFields").cloned(),
                );
            }
            if object.pointer("/metadata/managedFields") == current.pointer("/metadata/managedFields") {
                object = apply::record_update(
                    Some(&current),
                    &object,
                    &options.field_manager,
                    &*self.list_types(def, version),
                    &now,
                );
            }
            let request = self.admission_request(
                def,
                version,
                namespace,
                name,
                subresource.unwrap_or_default(),
                Operation::Update,
                options.dry_run,
            );
            warnings.extend(self.admission.mutate(&request, &mut object, Some(&current)).await?.warnings);
            // Admission may not touch what the subresource does not own.
            object = merge_for_update(def, subresource, &current, object);
            // Pods/ephemeralcontainers changes the spec too, and moves the generation as
            // kube-apiserver 1.34's strategy does.
            if (subresource.is_none() || (is_pod(def) && subresource == Some(super::ephemeral::SUBRESOURCE)))
                && builtin::tracks_generation(def)
                && objects::spec_part(&object) != objects::spec_part(&current)
            {
                objects::set_meta(&mut object, "generation", Some(json!(objects::generation(&current) + 1)));
            }
            self.validate(def, version, &object, Some(&current), subresource)?;
            if subresource.is_none() && def.group.is_empty() && def.kind == "PersistentVolumeClaim" {
                self.admit_claim_resize(def, name, &current, &object)?;
            }
            warnings.extend(self.admission.validate(&request, Some(&object), Some(&current)).await?.warnings);
            if options.dry_run {
                return Ok(Written { object, warnings, created: false });
            }
            if object == current {
                return Ok(Written { object: current, warnings, created: false });
            }
            let spec_finalizers_pending = def.group.is_empty()
                && def.kind == "Namespace"
                && object
                    .pointer("/spec/finalizers")
                    .and_then(Value::as_array)
                    .is_some_and(|f| !f.is_empty());
            let finalized = objects::is_deleting(&object)
                && objects::finalizers(&object).is_empty()
                && !spec_finalizers_pending
                && object
                    .pointer("/metadata/deletionGracePeriodSeconds")
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
                    == 0;
            let stored_form = self.converter.to_storage(def, object).await?;
            let result = if finalized {
                self.store.delete(&key, Some(stored_rv)).map(|removed| (removed, true))
            } else {
                self.store.update(&key, stored_form, Some(stored_rv)).map(|stored| (stored, false))
            };
            match result {
                Ok((stored, _)) => {
                    self.after_write(def);
                    let object = self.to_version(def, (*stored).clone(), version).await?;
                    return Ok(Written { object, warnings, created: false });
                }
                Err(StoreError::Conflict) if precondition.is_none() => continue,
                Err(StoreError::Conflict) => return Err(ApiError::conflict(&def.group, &def.resource, name)),
                Err(StoreError::NotFound) => {
                    return Err(ApiError::not_found(&def.group, &def.resource, name));
                }
                Err(other) => return Err(store_error(def, name, other)),
            }
        }
        Err(ApiError::conflict(&def.group, &def.resource, name))
    }

    /// Runs validating admission for a create on a subresource (`pods/eviction`, `pods/binding`).
    pub async fn admit_subresource_create(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        subresource: &str,
        object: &Value,
    ) -> Result<Vec<String>, ApiError> {
        let version = def.storage_version.clone();
        let request =
            self.admission_request(def, &version, namespace, name, subresource, Operation::Create, false);
        Ok(self.admission.validate(&request, Some(object), None).await?.warnings)
    }

    /// DELETE one object.
    pub async fn delete(
        &self,
        def: &ResourceDef,
        version: &str,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Deleted, ApiError> {
        let key = Self::key(def, namespace, name);
        for _ in 0..CONFLICT_RETRIES {
            let stored =
                self.store.get(&key).ok_or_else(|| ApiError::not_found(&def.group, &def.resource, name))?;
            let stored_rv = objects::resource_version(&stored).unwrap_or(0);
            if let Some(uid) = &options.precondition_uid
                && objects::uid(&stored) != Some(uid.as_str())
            {
                return Err(precondition_failed(
                    def,
                    name,
                    "UID",
                    uid,
                    objects::uid(&stored).unwrap_or_default(),
                ));
            }
            if let Some(rv) = &options.precondition_rv
                && stored_rv.to_string() != *rv
            {
                return Err(precondition_failed(def, name, "ResourceVersion", rv, &stored_rv.to_string()));
            }
            let current = self.to_version(def, (*stored).clone(), version).await?;
            let request =
                self.admission_request(def, version, namespace, name, "", Operation::Delete, options.dry_run);
            self.admission.validate(&request, None, Some(&current)).await?;

            let plan = plan_deletion(def, &current, options);
            if options.dry_run {
                return Ok(match plan {
                    DeletionPlan::Remove => Deleted::Gone(current),
                    DeletionPlan::Mark(object) | DeletionPlan::Unchanged(object) => Deleted::Pending(object),
                });
            }
            let result = match plan {
                DeletionPlan::Unchanged(object) => return Ok(Deleted::Pending(object)),
                DeletionPlan::Remove => {
                    self.store.delete(&key, Some(stored_rv)).map(|removed| (removed, true))
                }
                DeletionPlan::Mark(object) => {
                    let stored_form = self.converter.to_storage(def, object).await?;
                    self.store.update(&key, stored_form, Some(stored_rv)).map(|stored| (stored, false))
                }
            };
            match result {
                Ok((object, gone)) => {
                    self.after_write(def);
                    let object = self.to_version(def, (*object).clone(), version).await?;
                    return Ok(if gone { Deleted::Gone(object) } else { Deleted::Pending(object) });
                }
                Err(StoreError::Conflict) => continue,
                Err(StoreError::NotFound) => {
                    return Err(ApiError::not_found(&def.group, &def.resource, name));
                }
                Err(other) => return Err(store_error(def, name, other)),
            }
        }
        Err(ApiError::conflict(&def.group, &def.resource, name))
    }

    /// DELETE a collection: deletes every object the list options select.
    pub async fn delete_collection(
        &self,
        def: &ResourceDef,
        version: &str,
        namespace: Option<&str>,
        list: &ListOptions,
        options: &DeleteOptions,
    ) -> Result<Vec<Value>, ApiError> {
        let (objects, _, _) = self.list(def, version, namespace, list).await?;
        let mut deleted = Vec::new();
        for object in objects {
            let name = objects::name(&object).unwrap_or_default().to_string();
            let ns = objects::namespace(&object).map(str::to_string);
            match self.delete(def, version, ns.as_deref(), &name, options).await {
                Ok(Deleted::Gone(object) | Deleted::Pending(object)) => deleted.push(object),
                Err(error) if error.code == 404 => {}
                Err(error) => return Err(error),
            }
        }
        Ok(deleted)
    }

    /// Rejects a body whose apiVersion/kind disagree with the URL, and fills them in when absent.
    fn check_body_type(&self, def: &ResourceDef, version: &str, mut body: Value) -> Result<Value, ApiError> {
        if !body.is_object() {
            return Err(ApiError::bad_request("the body of the request must be an object"));
        }
        let expected_version = def.api_version(version);
        match body.get("apiVersion").and_then(Value::as_str) {
            Some(given) if given != expected_version => {
                return Err(ApiError::bad_request(format!(
                    "the API version in the data ({given}) does not match the expected API version ({expected_version})"
                )));
            }
            _ => body["apiVersion"] = json!(expected_version),
        }
        match body.get("kind").and_then(Value::as_str) {
            Some(given) if given != def.kind => {
                return Err(ApiError::bad_request(format!(
                    "the kind in the data ({given}) does not match the expected kind ({})",
                    def.kind
                )));
            }
            _ => body["kind"] = json!(def.kind),
        }
        Ok(body)
    }

    /// Drops unknown fields (per `fieldValidation`) and applies schema defaults.
    fn normalize(
        &self,
        def: &ResourceDef,
        version: &str,
        object: &mut Value,
        validation: FieldValidation,
    ) -> Result<Vec<String>, ApiError> {
        drop_nulls(def, object);
        let unknown = if def.is_custom() {
            let Some(schema_props) = def.schema(version) else { return Ok(Vec::new()) };
            let unknown = schema::prune(object, schema_props);
            schema::apply_defaults(object, schema_props);
            unknown
        } else {
            let decoded = builtin::type_check(def, object);
            if !decoded.errors.is_empty() {
                let detail = decoded.errors.iter().map(|e| e.detail.clone()).collect::<Vec<_>>().join("; ");
                return Err(ApiError::bad_request(format!(
                    "{} in version \"{version}\" cannot be handled as a {}: {detail}",
                    def.kind, def.kind
                )));
            }
            if let Some(normalized) = decoded.object {
                *object = normalized;
            }
            decoded.unknown
        };
        match validation {
            FieldValidation::Ignore => Ok(Vec::new()),
            FieldValidation::Warn => Ok(unknown
                .iter()
                .map(|path| format!("unknown field \"{}\"", path.trim_start_matches('.')))
                .collect()),
            FieldValidation::Strict if unknown.is_empty() => Ok(Vec::new()),
            FieldValidation::Strict => Err(ApiError::bad_request(format!(
                "{} in version \"{version}\" cannot be handled as a {}: strict decoding error: {}",
                def.kind,
                def.kind,
                unknown
                    .iter()
                    .map(|path| format!("unknown field \"{}\"", path.trim_start_matches('.')))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// kube-apiserver's `PersistentVolumeClaimResize` plugin: a claim grows only when bound and
    /// its StorageClass allows expansion (403 otherwise).
    fn admit_claim_resize(
        &self,
        def: &ResourceDef,
        name: &str,
        old: &Value,
        new: &Value,
    ) -> Result<(), ApiError> {
        if !claim_admission::grows(old, new) {
            return Ok(());
        }
        let class = self.store.get(&ObjectKey {
            group: "storage.k8s.io".into(),
            resource: "storageclasses".into(),
            namespace: None,
            name: claim_admission::claim_class(old).into(),
        });
        match claim_admission::resize_refusal(old, new, class.as_deref()) {
            Some(reason) => Err(ApiError::forbidden(&def.group, &def.resource, name, reason)),
            None => Ok(()),
        }
    }

    /// Schema or built-in validation; 422 with every field error.
    fn validate(
        &self,
        def: &ResourceDef,
        version: &str,
        object: &Value,
        old: Option<&Value>,
        subresource: Option<&str>,
    ) -> Result<(), ApiError> {
        let name = objects::name(object).unwrap_or_default().to_string();
        let mut errors: ErrorList = Vec::new();
        if def.is_custom() {
            if name.is_empty() && objects::meta_str(object, "generateName").is_none() {
                errors.push(FieldError::required(
                    &FieldPath::root("metadata").child("name"),
                    "name or generateName is required",
                ));
            }
            if let Some(schema_props) = def.schema(version) {
                errors.extend(schema::validate(object, schema_props));
            }
            if let Some(scale) =
                def.crd_version(version).and_then(|v| v.subresources.as_ref()).and_then(|s| s.scale.as_ref())
            {
                if subresource.is_none() {
                    errors.extend(super::scale_validation::spec_errors(object, scale));
                }
                if matches!(subresource, None | Some("status")) {
                    errors.extend(super::scale_validation::status_errors(object, scale));
                }
            }
            let meta = serde_json::from_value(object.get("metadata").cloned().unwrap_or(json!({})))
                .unwrap_or_default();
            errors.extend(
                kruise_machinery::validation::meta::validate_object_meta(&meta, def.namespaced)
                    .into_iter()
                    .filter(|e| e.path.as_str() != "metadata.name" || !name.is_empty()),
            );
        } else {
            errors.extend(builtin::validate(def, object, old, subresource));
            if def.group == "apiextensions.k8s.io" && def.kind == "CustomResourceDefinition" {
                match serde_json::from_value(object.clone()) {
                    Ok(crd) => errors.extend(schema::validate_crd(&crd)),
                    Err(error) => {
                        errors.push(FieldError::invalid(&FieldPath::root("spec"), "", error.to_string()))
                    }
                }
            }
        }
        if let Some(old) = old {
            for field in ["name", "namespace", "uid", "creationTimestamp"] {
                if objects::meta_str(old, field) != objects::meta_str(object, field) {
                    errors.push(FieldError::invalid(
                        &FieldPath::root("metadata").child(field),
                        objects::meta_str(object, field).unwrap_or_default(),
                        "field is immutable",
                    ));
                }
            }
        }
        // Errors name the stored kind, as kube-apiserver's (internal) types do.
        if errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid(def.storage_group(), &def.kind, &name, &errors))
        }
    }

    fn check_namespace_accepts(&self, namespace: &str, resource: &str, name: &str) -> Result<(), ApiError> {
        let key = ObjectKey {
            group: String::new(),
            resource: "namespaces".into(),
            namespace: None,
            name: namespace.into(),
        };
        match self.store.get(&key) {
            None => Err(ApiError::not_found("", "namespaces", namespace)),
            Some(ns) if objects::is_deleting(&ns) => Err(ApiError::forbidden(
                "",
                resource,
                name,
                format!(
                    "unable to create new content in namespace {namespace} because it is being terminated"
                ),
            )),
            Some(_) => Ok(()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn admission_request<'a>(
        &self,
        def: &'a ResourceDef,
        version: &'a str,
        namespace: Option<&'a str>,
        name: &'a str,
        subresource: &'a str,
        operation: Operation,
        dry_run: bool,
    ) -> AdmissionRequest<'a> {
        AdmissionRequest {
            group: &def.group,
            version,
            kind: &def.kind,
            resource: &def.resource,
            subresource,
            namespace: if def.namespaced { namespace } else { None },
            name,
            operation,
            dry_run,
            namespaced: def.namespaced,
        }
    }

    /// How lists of this resource are keyed, for server-side apply.
    fn list_types(&self, def: &ResourceDef, version: &str) -> Box<dyn apply::ListTypes + Send + Sync> {
        match (merge_keys::kind_patch_meta(&def.group, &def.kind), def.schema(version)) {
            (Some(meta), _) => Box::new(meta),
            (None, Some(schema_props)) => Box::new(SchemaLists(schema_props.clone())),
            (None, None) => Box::new(NoLists),
        }
    }
}

/// List and map types of a custom resource from its structural schema, for server-side apply.
struct SchemaLists(k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps);

impl SchemaLists {
    /// The schema node at an apply path (`spec.containers[].ports`, map entries by key).
    fn node(
        &self,
        path: &str,
    ) -> Option<&k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps> {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
            JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
        };
        let mut node = &self.0;
        for segment in path.split('.').filter(|s| !s.is_empty()) {
            let (name, items) = match segment.strip_suffix("[]") {
                Some(name) => (name, true),
                None => (segment, false),
            };
            node = match node.properties.as_ref().and_then(|p| p.get(name)) {
                Some(child) => child,
                None => match &node.additional_properties {
                    Some(JSONSchemaPropsOrBool::Schema(values)) => values,
                    _ => return None,
                },
            };
            if items {
                node = match &node.items {
                    Some(JSONSchemaPropsOrArray::Schema(item)) => item,
                    _ => return None,
                };
            }
        }
        Some(node)
    }
}

impl apply::ListTypes for SchemaLists {
    fn list_strategy(&self, path: &str) -> merge_keys::ListStrategy {
        match schema::list_type_at(&self.0, path) {
            // The real keys come from `list_map_keys`.
            Some((list_type, _)) if list_type == "map" => merge_keys::ListStrategy::MergeByKey(""),
            Some((list_type, _)) if list_type == "set" => merge_keys::ListStrategy::MergeSet,
            _ => merge_keys::ListStrategy::Replace,
        }
    }

    fn list_map_keys(&self, path: &str) -> Vec<String> {
        match schema::list_type_at(&self.0, path) {
            Some((list_type, keys)) if list_type == "map" => keys,
            _ => Vec::new(),
        }
    }

    fn is_map(&self, path: &str) -> bool {
        self.node(path).is_some_and(|node| {
            node.additional_properties.is_some()
                || (node.x_kubernetes_preserve_unknown_fields == Some(true) && node.properties.is_none())
        })
    }

    fn is_atomic(&self, path: &str) -> bool {
        self.node(path).is_some_and(|node| node.x_kubernetes_map_type.as_deref() == Some("atomic"))
    }
}

struct NoLists;
impl apply::ListTypes for NoLists {
    fn list_strategy(&self, _: &str) -> merge_keys::ListStrategy {
        merge_keys::ListStrategy::Replace
    }
}

/// The object an update proposes, restricted to what the request may change: the main
/// resource keeps the stored status (when a status subresource exists), the status subresource
/// keeps everything but status, and server-owned metadata always stays.
pub fn merge_for_update(
    def: &ResourceDef,
    subresource: Option<&str>,
    current: &Value,
    proposed: Value,
) -> Value {
    let mut object = match subresource {
        Some("binding") => bound_pod(current, &proposed),
        Some(super::ephemeral::SUBRESOURCE) => {
            super::ephemeral::with_ephemeral_containers(current, &proposed)
        }
        Some("resize") => {
            // Only container resources (and their resize policies) change through pods/resize.
            let mut object = current.clone();
            for list in ["containers", "initContainers"] {
                let proposed_list = proposed
                    .pointer(&format!("/spec/{list}"))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                if let Some(containers) =
                    object.pointer_mut(&format!("/spec/{list}")).and_then(Value::as_array_mut)
                {
                    for container in containers.iter_mut() {
                        let name = container.get("name").cloned();
                        if let Some(new) = proposed_list.iter().find(|c| c.get("name") == name.as_ref()) {
                            for field in ["resources", "resizePolicy"] {
                                match new.get(field) {
                                    Some(value) => container[field] = value.clone(),
                                    None => {
                                        container.as_object_mut().map(|c| c.remove(field));
                                    }
                                }
                            }
                        }
                    }
                }
            }
            object
        }
        Some("finalize") => {
            let mut object = current.clone();
            match proposed.pointer("/spec/finalizers") {
                Some(finalizers) => object["spec"]["finalizers"] = finalizers.clone(),
                None => {
                    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
                        spec.remove("finalizers");
                    }
                }
            }
            object
        }
        Some("status") => {
            let mut object = current.clone();
            match proposed.get("status") {
                Some(status) => object["status"] = status.clone(),
                None => {
                    object.as_object_mut().map(|o| o.remove("status"));
                }
            }
            if def.group.is_empty() && def.resource == "pods" {
                // kube-apiserver's pod status strategy resets only the spec, deletionTimestamp
                // and ownerReferences: labels and annotations written through pods/status
                // stick (kruise-daemon reports `apps.kruise.io/runtime-containers-meta` so,
                // without going through the pod admission webhooks).
                for field in ["labels", "annotations"] {
                    objects::set_meta(
                        &mut object,
                        field,
                        proposed.pointer(&format!("/metadata/{field}")).cloned(),
                    );
                }
            }
            object
        }
        _ => {
            let mut object = proposed;
            if def.has_status() && subresource.is_none() {
                match current.get("status") {
                    Some(status) => object["status"] = status.clone(),
                    None => {
                        object.as_object_mut().map(|o| o.remove("status"));
                    }
                }
            }
            object
        }
    };
    for field in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "resourceVersion",
        "selfLink",
    ] {
        let value = current.pointer(&format!("/metadata/{field}")).cloned();
        objects::set_meta(&mut object, field, value);
    }
    for field in ["apiVersion", "kind"] {
        if let Some(value) = current.get(field) {
            object[field] = value.clone();
        }
    }
    object
}

/// What `pods/binding` writes: the node name and the binding's annotations, and the
/// `PodScheduled=True` condition, as kube-apiserver's binding storage does.
fn bound_pod(current: &Value, proposed: &Value) -> Value {
    let mut object = current.clone();
    if let Some(node) = proposed.pointer("/spec/nodeName") {
        object["spec"]["nodeName"] = node.clone();
    }
    if let Some(annotations) = proposed.pointer("/metadata/annotations") {
        objects::set_meta(&mut object, "annotations", Some(annotations.clone()));
    }
    let now = objects::now_rfc3339();
    if !object.get("status").is_some_and(Value::is_object) {
        object["status"] = json!({});
    }
    let conditions = object["status"]
        .as_object_mut()
        .map(|status| status.entry("conditions").or_insert_with(|| json!([])));
    if let Some(conditions) = conditions.and_then(Value::as_array_mut) {
        match conditions.iter_mut().find(|c| c["type"] == "PodScheduled") {
            Some(condition) => {
                if condition["status"] != "True" {
                    condition["status"] = json!("True");
                    condition["lastTransitionTime"] = json!(now);
                }
                if let Some(condition) = condition.as_object_mut() {
                    condition.remove("reason");
                    condition.remove("message");
                }
            }
            None => conditions.push(json!({
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": null,
                "lastTransitionTime": now,
            })),
        }
    }
    object
}

enum DeletionPlan {
    /// Remove from storage now.
    Remove,
    /// Mark as deleting (deletionTimestamp, finalizers) and keep.
    Mark(Value),
    /// Already being deleted; nothing to change.
    Unchanged(Value),
}

/// What a DELETE does to an object: pods on a node are deleted gracefully (the kubelet
/// finishes), objects with finalizers (or a Foreground/Orphan propagation, which adds one) are
/// marked and kept until the finalizers are removed; everything else goes at once.
fn plan_deletion(def: &ResourceDef, current: &Value, options: &DeleteOptions) -> DeletionPlan {
    let is_pod = def.group.is_empty() && def.kind == "Pod";
    let is_namespace = def.group.is_empty() && def.kind == "Namespace";
    let mut grace = if is_pod {
        let scheduled =
            current.pointer("/spec/nodeName").and_then(Value::as_str).is_some_and(|n| !n.is_empty());
        let terminal =
            matches!(current.pointer("/status/phase").and_then(Value::as_str), Some("Succeeded" | "Failed"));
        if !scheduled || terminal {
            0
        } else {
            options
                .grace_period_seconds
                .unwrap_or_else(|| {
                    current
                        .pointer("/spec/terminationGracePeriodSeconds")
                        .and_then(Value::as_i64)
                        .unwrap_or(30)
                })
                .max(0)
        }
    } else {
        0
    };
    if options.grace_period_seconds == Some(0) {
        grace = 0;
    }
    let mut finalizers = objects::finalizers(current);
    match options.propagation_policy.as_deref() {
        Some("Foreground") if !finalizers.iter().any(|f| f == "foregroundDeletion") => {
            finalizers.push("foregroundDeletion".into())
        }
        Some("Orphan") if !finalizers.iter().any(|f| f == "orphan") => finalizers.push("orphan".into()),
        _ => {}
    }
    let namespace_finalizing = is_namespace
        && current.pointer("/spec/finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty());

    if objects::is_deleting(current) {
        let existing =
            current.pointer("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64).unwrap_or(0);
        if finalizers.is_empty() && !namespace_finalizing && grace == 0 {
            return DeletionPlan::Remove;
        }
        if grace < existing || finalizers != objects::finalizers(current) {
            let mut object = current.clone();
            if grace < existing {
                objects::set_meta(&mut object, "deletionGracePeriodSeconds", Some(json!(grace)));
                objects::set_meta(&mut object, "deletionTimestamp", Some(json!(timestamp_in(grace))));
            }
            objects::set_finalizers(&mut object, &finalizers);
            return DeletionPlan::Mark(object);
        }
        return DeletionPlan::Unchanged(current.clone());
    }
    if grace == 0 && finalizers.is_empty() && !namespace_finalizing {
        return DeletionPlan::Remove;
    }
    let mut object = current.clone();
    objects::set_meta(&mut object, "deletionTimestamp", Some(json!(timestamp_in(grace))));
    objects::set_meta(&mut object, "deletionGracePeriodSeconds", Some(json!(grace)));
    // A first graceful deletion moves a kept generation (kinds without one keep none).
    if objects::generation(current) > 0 {
        objects::set_meta(&mut object, "generation", Some(json!(objects::generation(current) + 1)));
    }
    objects::set_finalizers(&mut object, &finalizers);
    if is_namespace {
        object["status"] = json!({"phase": "Terminating"});
    }
    DeletionPlan::Mark(object)
}

fn timestamp_in(seconds: i64) -> String {
    let now = k8s_openapi::jiff::Timestamp::now();
    let later = now.checked_add(k8s_openapi::jiff::SignedDuration::from_secs(seconds)).unwrap_or(now);
    later.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Drops the `null`s a request's decode drops in kube-apiserver, and keeps the others. A
/// built-in object is decoded into its Go type, where a null field is unset, except inside a
/// `runtime.RawExtension` (`ControllerRevision.data`), which keeps its bytes as sent. A custom
/// resource keeps its nulls here (its schema decides later which stay), except in `metadata`,
/// which is decoded as an ObjectMeta.
fn drop_nulls(def: &ResourceDef, object: &mut Value) {
    let Some(root) = object.as_object_mut() else { return };
    let raw_fields: &[&str] = match (def.group.as_str(), def.kind.as_str()) {
        _ if def.is_custom() => {
            root.retain(|field, value| !value.is_null() || !matches!(field.as_str(), "apiVersion" | "kind"));
            if let Some(metadata) = root.get_mut("metadata") {
                if metadata.is_null() {
                    root.remove("metadata");
                } else {
                    kruise_machinery::json::drop_null_fields(metadata);
                }
            }
            return;
        }
        ("apps", "ControllerRevision") => &["data"],
        _ => &[],
    };
    root.retain(|_, value| !value.is_null());
    for (field, value) in root.iter_mut() {
        if !raw_fields.contains(&field.as_str()) {
            kruise_machinery::json::drop_null_fields(value);
        }
    }
}

/// Whether `def` is core Pods (the kind with built-in admission here).
fn is_pod(def: &ResourceDef) -> bool {
    !def.is_custom() && def.group.is_empty() && def.kind == "Pod"
}

/// The status kube-apiserver answers for a patch that does not apply.
fn patch_error(error: &patch::PatchError) -> ApiError {
    let mut api_error = ApiError::bad_request(error.status_message());
    api_error.code = error.http_status();
    api_error.reason = error.status_reason();
    api_error
}

fn precondition_failed(def: &ResourceDef, name: &str, what: &str, expected: &str, actual: &str) -> ApiError {
    let mut error = ApiError::conflict(&def.group, &def.resource, name);
    error.message =
        format!("Precondition failed: {what} in precondition: {expected}, {what} in object meta: {actual}");
    error
}

fn store_error(def: &ResourceDef, name: &str, error: StoreError) -> ApiError {
    match error {
        StoreError::AlreadyExists => ApiError::already_exists(&def.group, &def.resource, name),
        StoreError::NotFound => ApiError::not_found(&def.group, &def.resource, name),
        StoreError::Conflict => ApiError::conflict(&def.group, &def.resource, name),
        StoreError::Gone { requested, oldest } => {
            ApiError::gone(format!("too old resource version: {requested} ({oldest})"))
        }
        other => ApiError::internal(other.to_string()),
    }
}
