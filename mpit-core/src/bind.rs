//! Binding of variables and event types to MPI objects (MPI-4.1 §16.3.2).

use crate::macros::c_enum;

c_enum! {
    /// The kind of MPI object a variable or event type must be bound to
    /// (MPI-4.1 §16.3.2).
    ///
    /// A variable with [`Bind::NoObject`] applies to the whole MPI process;
    /// any other variable gets one handle per object instance, allocated with
    /// a pointer to an object of exactly this kind. MPI-4.0 added
    /// [`Bind::Session`].
    ///
    /// ```
    /// use mpit_core::Bind;
    ///
    /// assert!(!Bind::NoObject.is_object());
    /// assert!(Bind::Comm.is_object());
    /// assert_eq!(Bind::Comm.c_name(), "MPI_T_BIND_MPI_COMM");
    /// assert_eq!(Bind::Comm.to_string(), "MPI_COMM");
    /// assert_eq!("mpi_session".parse::<Bind>().unwrap(), Bind::Session);
    /// assert_eq!(Bind::ALL.len(), 12);
    /// ```
    pub enum Bind ("MPI_T_BIND_", "bind",
        /// The C type of the object to bind to (`MPI_Comm`, ...); empty for `NoObject`.
        object_c_type) {
        /// Applies globally to the MPI process; no object is needed.
        NoObject = "MPI_T_BIND_NO_OBJECT" => "",
        /// MPI communicators (`MPI_Comm`).
        Comm = "MPI_T_BIND_MPI_COMM" => "MPI_Comm",
        /// MPI datatypes (`MPI_Datatype`).
        Datatype = "MPI_T_BIND_MPI_DATATYPE" => "MPI_Datatype",
        /// MPI error handlers (`MPI_Errhandler`).
        Errhandler = "MPI_T_BIND_MPI_ERRHANDLER" => "MPI_Errhandler",
        /// MPI file handles (`MPI_File`).
        File = "MPI_T_BIND_MPI_FILE" => "MPI_File",
        /// MPI groups (`MPI_Group`).
        Group = "MPI_T_BIND_MPI_GROUP" => "MPI_Group",
        /// MPI reduction operators (`MPI_Op`).
        Op = "MPI_T_BIND_MPI_OP" => "MPI_Op",
        /// MPI requests (`MPI_Request`).
        Request = "MPI_T_BIND_MPI_REQUEST" => "MPI_Request",
        /// MPI windows for one-sided communication (`MPI_Win`).
        Win = "MPI_T_BIND_MPI_WIN" => "MPI_Win",
        /// MPI message objects (`MPI_Message`).
        Message = "MPI_T_BIND_MPI_MESSAGE" => "MPI_Message",
        /// MPI info objects (`MPI_Info`).
        Info = "MPI_T_BIND_MPI_INFO" => "MPI_Info",
        /// MPI sessions (`MPI_Session`, added in MPI-4.0).
        Session = "MPI_T_BIND_MPI_SESSION" => "MPI_Session" @ "MPI-4.0",
    }
}

impl Bind {
    /// Whether a handle for this binding needs an MPI object
    /// (everything but [`Bind::NoObject`]).
    pub const fn is_object(self) -> bool {
        !matches!(self, Bind::NoObject)
    }

    /// The C type of the object to bind to (`MPI_Comm`, ...), or `None` for
    /// [`Bind::NoObject`].
    pub const fn object_type(self) -> Option<&'static str> {
        match self {
            Bind::NoObject => None,
            _ => Some(self.object_c_type()),
        }
    }
}
